package io.snowstamp.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.Bench;
import io.snowstamp.bench.Bench.Settings;
import io.snowstamp.bench.Bench.Topo;
import io.snowstamp.bench.BenchCases;
import io.snowstamp.bench.BenchResult;
import io.snowstamp.bench.BenchSummary;
import io.snowstamp.bench.BenchSummary.Case;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.SnowstampConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "bench", header = "Measures the stamper against its floor, its peer and a pass-through, in one run.",
        description = "For each --value-bytes size, loads --records sample events into a fresh input topic: JSON order "
                + "events (~85 bytes) padded to that size with members of a few words each (80: the event as it is). Then "
                + "runs --repeat rounds; each round runs every case once at every size, in rotated order (reversed every "
                + "other round), each with a fresh application id, output topic and state, all exactly-once on "
                + "snowstamp's shipped settings. The cases:%n"
                + "Ceiling: the pass-through (source -> sink), no ID and no headers, which no stamper can reach. "
                + "Floors: the stamper's topology carrying the same bytes as the stamper but issuing no ID, a processor "
                + "that forwards each record to its aligned partition with the two headers (text, or compact), and for "
                + "JSON mode the same number spliced into the value too: what carrying an ID costs in Kafka, whoever "
                + "issues it. Peers: what a user would write instead, a random UUID's text in a header (header mode) or "
                + "a Jackson tree with a UUID field added (JSON mode). The stamper: header mode, header mode with the "
                + "compact header format, JSON mode.%n"
                + "Every case first runs once at every size on up to 300,000 records (fewer above 256 bytes), to warm up "
                + "the JIT. For each "
                + "case: the steady rate (output records/s while the output grows from 10%% to 90%% of the input: "
                + "start-up and the wait for the last commit left out) and this process's CPU time per record in that "
                + "window (the stamper's own process: all its threads, not the broker's, unless the broker is embedded "
                + "in this process); each stamper case as a ratio to its floor, its peer and the ceiling of the same "
                + "round (median, lowest and highest), beside its goal and whether the median meets it. The goals: "
                + "header mode (both formats) at least 0.97 times its floor's records/s, at most 1.05 times its "
                + "CPU/record and at least level with the UUID-header peer (the compact format at least 1.10 times it "
                + "at 1024 bytes); JSON mode at least 1.25 times the Jackson + UUID peer at 1024 and 4096 bytes (its floor "
                + "reported, not judged); Avro mode (--schema-registry) at least 0.95 times its floor's records/s and at most "
                + "1.10 times its CPU/record at every size (its decode-and-encode peer reported). A table per size, then the goals.%n"
                + "Values above 256 bytes are read in fewer records of the same bytes (--records x 256 / size: a "
                + "quarter at 1024, a sixteenth at 4096), so that every size's run takes about as long. On a quiet 2-core "
                + "machine with the broker in its own process, --value-bytes 80,1024,4096 took 4 minutes (3 rounds, 9 "
                + "cases, 1,000,000 records) and 8 minutes with --records 3000000; the default run, 80 bytes alone, "
                + "about a third of that. A loaded machine or the embedded broker takes two to three times as long. With --latency-seconds also produce-to-read_committed "
                + "p50/p99 at a steady --latency-rate, at the first size. --format json prints one JSON document "
                + "instead of the tables (progress goes to stderr): per size and case the figures, ratios and goals, "
                + "and the list of goals; --output-json also writes it to a file. Without --bootstrap-servers or "
                + "--data-dir it uses a fresh embedded broker in a temporary directory, in this JVM: CPU and peak heap "
                + "then include the broker's. Run 'snowstamp broker' in another process (or use your cluster) and pass "
                + "--bootstrap-servers to measure the stamper alone, as in production.",
        footer = {"", "Examples:", "  snowstamp bench --records 200000 --repeat 1",
                "  snowstamp bench --bootstrap-servers 127.0.0.1:9092 --value-bytes 80,1024,4096 --output-json bench.json",
                "  snowstamp bench --bootstrap-servers 127.0.0.1:9092 --broker-pid $(pgrep -f 'snowstamp.jar broker') --breakdown",
                "  snowstamp bench --bootstrap-servers kafka:9092 --set kafka.num.stream.threads=2 --format json",
                "  snowstamp bench --bootstrap-servers 127.0.0.1:9092 --footprint-partitions 64,256,1024"})
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--records", paramLabel = "N", defaultValue = "1000000", description = "records per run (default: ${DEFAULT-VALUE})")
    long records;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "4", description = "partitions of the bench topics (default: ${DEFAULT-VALUE})")
    int partitions;

    @Option(names = "--repeat", paramLabel = "R", defaultValue = "3",
            description = "rounds; medians and the spread of the per-round ratios are reported (default: ${DEFAULT-VALUE})")
    int repeat;

    @Option(names = "--value-bytes", paramLabel = "B", split = ",", defaultValue = "80",
            description = "value sizes, e.g. 80,1024,4096: every case runs at each (default: ${DEFAULT-VALUE}, the sample "
                    + "event unpadded)")
    List<Integer> valueBytes;

    /** The Jackson + UUID app is a default case (JSON mode's peer) now; kept so that older commands still run. */
    @Option(names = "--jackson", hidden = true)
    boolean jackson;

    @Option(names = "--profiles", description = "also run the pass-through on Kafka Streams' own defaults and header mode "
            + "with the throughput profile")
    boolean profiles;

    @Option(names = "--latency-seconds", paramLabel = "S", defaultValue = "0",
            description = "also measure latency for this many seconds per topology (default: off)")
    int latencySeconds;

    @Option(names = "--latency-rate", paramLabel = "R", defaultValue = "20000", description = "records/s in the latency runs (default: ${DEFAULT-VALUE})")
    int latencyRate;

    @Option(names = "--breakdown", description = "also run the cases that split what stamping costs further: the stamper's "
            + "topology with a processor that only forwards each record to its aligned output partition (no headers), header "
            + "mode without the provenance header, and JSON mode with compact headers")
    boolean breakdown;

    @Option(names = "--broker-pid", paramLabel = "PID", description = "the process id of the broker, when it runs on this machine "
            + "(e.g. 'snowstamp broker'): its CPU time per record is measured too, per case and as a ratio to each "
            + "baseline's (default: not measured)")
    Long brokerPid;

    @Option(names = "--format", paramLabel = "F", defaultValue = "table",
            description = "table (for a terminal; its last line is the JSON document too) or json (only the JSON document on "
                    + "stdout) (default: ${DEFAULT-VALUE})")
    ChangelogCommand.Format format;

    @Option(names = "--output-json", paramLabel = "FILE", description = "also write the JSON document to FILE (default: none)")
    Path outputJson;

    @Option(names = "--schema-registry", paramLabel = "URL", description = "also run the Avro cases (values framed for a schema "
            + "registry: the stamper with stamp.value-format=avro, its floor and its peer) against the schema registry at URL, e.g. "
            + "http://127.0.0.1:8080/apis/ccompat/v7 (default: not run)")
    String schemaRegistry;

    @Option(names = "--avro-only", description = "with --schema-registry: run the Avro cases only")
    boolean avroOnly;

    /**
     * Values up to this size are read --records at a time; larger ones in fewer records of the same bytes, so that a run
     * at 1 KiB or 4 KiB takes about as long as one at 80 bytes (measured: ~4x and ~16x fewer records per second).
     */
    private static final int FULL_RECORDS_UP_TO = 256;
    /** Largest value size: well under the producer's default max.request.size (1 MiB) once stamped. */
    private static final int MAX_VALUE_BYTES = 512 * 1024;
    private static final long WARM_UP_RECORDS = 300_000;

    @Option(names = "--footprint-partitions", paramLabel = "N", split = ",",
            description = "instead of the throughput runs: one stamper instance's footprint (resident memory, threads, open files, "
                    + "state directory, time until every partition stamped, failover time: until every partition stamps again after "
                    + "one of two instances is killed, and until it caught up with the records produced meanwhile) at each partition "
                    + "count, e.g. 64,256,1024 "
                    + "(default: none)")
    List<Integer> footprintPartitions;

    @Option(names = "--footprint-rate", paramLabel = "R", defaultValue = "0",
            description = "with --footprint-partitions: instead of the footprint, the busy failover — R records per partition per "
                    + "second on every partition from before the start to the end, two instances, one killed with SIGKILL once both "
                    + "run; time until every partition stamped, failover (every partition stamped a record produced after the kill), "
                    + "caught up, the longest stall of a partition, records missing, stamped twice, ID values issued twice — for the "
                    + "stamper and, run first, for a Kafka Streams pass-through with the same settings (the floor) "
                    + "(default: ${DEFAULT-VALUE}: the footprint)")
    double footprintRate;

    @Option(names = "--footprint-floor", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "with --footprint-rate: also measure the pass-through floor, before each stamper run (default: "
                    + "${DEFAULT-VALUE}; --no-footprint-floor measures the stamper alone, e.g. to compare two builds)")
    boolean footprintFloor;

    @Option(names = "--footprint-java-options", paramLabel = "OPTS", defaultValue = "-Xmx768m",
            description = "JVM options of the measured stamper processes (default: ${DEFAULT-VALUE}, the heap of a 1 GiB container "
                    + "with the image's -XX:MaxRAMPercentage=75)")
    String footprintJavaOptions;

    @Option(names = "--footprint-guarantee", paramLabel = "G", split = ",",
            description = "with --footprint-partitions: the processing guarantee of the measured processes, the stamper and the "
                    + "pass-through alike: exactly_once_v2, at_least_once, or both (exactly_once_v2,at_least_once: every partition "
                    + "count runs under each) (default: processing.guarantee of the settings, exactly_once_v2 unless set)")
    List<String> footprintGuarantee;

    @Option(names = "--neighbour-cores", paramLabel = "N", split = ",", defaultValue = "0",
            description = "with --footprint-partitions: a noisy neighbour, N busy loops (one shell process each, so not in the "
                    + "measured figures) running for the whole of each measured run, the stamper's and the pass-through's alike, "
                    + "and stopped after it; a list (e.g. 0,1) runs every partition count and guarantee with each, 0 without "
                    + "(default: ${DEFAULT-VALUE})")
    List<Integer> neighbourCores;

    @Option(names = "--footprint-set", paramLabel = "KEY=VALUE",
            description = "with --footprint-partitions: a setting of the measured stamper processes only (any key of the "
                    + "README but kafka.*, which --set gives both them and the pass-through), e.g. stamp.provenance=false to "
                    + "measure at-least-once without the skip of what is already stamped; repeatable (default: none)")
    Map<String, String> footprintSettings = new java.util.LinkedHashMap<>();

    /** Busy loops beyond this are a typing error rather than a neighbour (the loops would only queue behind each other). */
    static final int MAX_NEIGHBOUR_CORES = 64;

    @Override
    public Integer call() throws Exception {
        List<ConnectionSettings.Guarantee> guarantees = guarantees();
        if (records < 1 || partitions < 1 || repeat < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--records, --partitions and --repeat must be >= 1");
        }
        if (valueBytes.stream().anyMatch(b -> b < 1 || b > MAX_VALUE_BYTES) || valueBytes.stream().distinct().count() < valueBytes.size()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--value-bytes " + valueBytes
                    + ": each size once, from 1 to " + MAX_VALUE_BYTES + " bytes");
        }
        ProcessHandle broker = brokerPid == null ? null : ProcessHandle.of(brokerPid)
                .filter(p -> p.info().totalCpuDuration().isPresent())
                .orElseThrow(() -> new picocli.CommandLine.ParameterException(spec.commandLine(), "--broker-pid " + brokerPid
                        + ": no process of this id whose CPU time can be read here (give the pid of a broker on this machine)"));
        PrintWriter out = spec.commandLine().getOut();
        // with --format json stdout holds the document alone: progress goes to stderr
        PrintWriter progress = format == ChangelogCommand.Format.json ? spec.commandLine().getErr() : out;
        Path tmp = null;
        if (options.bootstrapServers == null && !options.configOptions.settings.containsKey("kafka.bootstrap.servers")
                && !spec.commandLine().getParseResult().hasMatchedOption("--data-dir")) {
            tmp = Files.createTempDirectory("snowstamp-bench");
            options.dataDir = tmp.resolve("kafka");
        }
        String input = "snowstamp-bench-in-" + ProcessHandle.current().pid();
        Map<String, String> flags = new HashMap<>(Map.of("input.topic", input, "state.dir",
                (tmp != null ? tmp : Files.createTempDirectory("snowstamp-bench")).resolve("streams").toString()));
        if (schemaRegistry != null) {
            flags.put("schema-registry.url", schemaRegistry);
        } else if (avroOnly) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--avro-only needs --schema-registry");
        }
        SnowstampConfig loaded = options.load(flags);
        options.configOptions.requireIssuableLayout();
        try (KafkaOptions.Connection connection = options.connect(loaded, 0)) {
            String servers = connection.config().connection().kafka().get("bootstrap.servers");
            if (footprintPartitions != null) {
                return new FootprintRuns(spec, footprintPartitions, footprintRate, footprintFloor, footprintJavaOptions, footprintSettings,
                        neighbourCores, format).run(connection.config(), guarantees, out, progress);
            }
            Bench bench = new Bench(overrides -> {
                Map<String, String> all = new HashMap<>(flags);
                all.put("kafka.bootstrap.servers", servers);
                all.putAll(overrides);
                return options.load(all);
            }, partitions, broker);
            double loadBefore = BenchOutput.loadAverage();
            List<BenchOutput.Size> sizes = new ArrayList<>();
            for (int bytes : valueBytes) {
                long n = recordsAt(records, bytes);
                progress.println("loading " + n + " records of " + bytes + " bytes into " + input + "-" + bytes + " (" + partitions
                        + " partitions) at " + servers);
                progress.flush();
                if (!avroOnly) {
                    sizes.add(new BenchOutput.Size(bench.load(n, bytes), n, new BenchSummary(BenchCases.at(bytes, breakdown, profiles))));
                }
                if (schemaRegistry != null) {
                    sizes.add(new BenchOutput.Size(bench.loadAvro(n, bytes), n, new BenchSummary(BenchCases.avroAt(bytes))));
                }
            }
            // warm the JIT (the broker's too, when embedded) on every case first: one short warm-up left
            // the first repetition up to 2x slower than the next ones
            // at every size: larger values take paths the smallest do not (JSON objects of more than 16 members)
            for (BenchOutput.Size size : sizes) {
                for (Case c : size.summary().cases()) {
                    bench.throughput("warm-up", c.topo(), c.settings(), size.input(),
                            Math.min(size.records(), recordsAt(WARM_UP_RECORDS, size.input().valueBytes())));
                }
            }
            BenchOutput.Size first = sizes.get(0);
            for (int r = 0; r < repeat; r++) {
                for (BenchOutput.Size size : sizes) {
                    for (Case c : roundOrder(size.summary().cases(), r)) {
                        BenchResult result = bench.throughput(c.name(), c.topo(), c.settings(), size.input(), size.records());
                        size.summary().add(c, result);
                        progress.printf(Locale.ROOT, "  round %d, %5d bytes: %-48s %,10.0f records/s %7.2f us CPU/record%n", r + 1,
                                size.input().valueBytes(), c.name(), result.recordsPerSecond(), result.cpuMicros());
                        progress.flush();
                    }
                }
            }
            int latencyBytes = first.input().valueBytes();
            List<BenchResult> latency = latencySeconds <= 0 ? List.of() : List.of(
                    bench.latency("identity, Kafka Streams defaults", Topo.IDENTITY, Settings.KAFKA_DEFAULTS, latencyBytes, latencyRate,
                            latencySeconds),
                    bench.latency("snowstamp header, shipped", Topo.HEADER, Settings.SHIPPED, latencyBytes, latencyRate, latencySeconds),
                    bench.latency("snowstamp header, throughput profile", Topo.HEADER, Settings.THROUGHPUT, latencyBytes, latencyRate,
                            latencySeconds));
            BenchOutput output = new BenchOutput(sizes, latency, latencyRate, latencySeconds);
            ObjectNode json = output.json(records, partitions, repeat, connection.embedded(), loadBefore);
            if (format == ChangelogCommand.Format.table) {
                output.printTables(out);
            }
            String document = JsonText.of(json);
            out.println(document);
            if (outputJson != null) {
                Files.writeString(outputJson, document + System.lineSeparator());
            }
        }
        return 0;
    }

    /**
     * The guarantees of the footprint runs, and the neighbour's cores, checked before anything starts: a usage error
     * (exit 2, one line) rather than a failure half-way through a long bench.
     */
    private List<ConnectionSettings.Guarantee> guarantees() {
        if (footprintPartitions == null && (footprintGuarantee != null || !footprintSettings.isEmpty()
                || spec.commandLine().getParseResult().hasMatchedOption("--neighbour-cores"))) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), (footprintGuarantee != null ? "--footprint-guarantee"
                    : !footprintSettings.isEmpty() ? "--footprint-set" : "--neighbour-cores")
                    + " applies to the footprint runs: give --footprint-partitions too");
        }
        for (String key : footprintSettings.keySet()) {
            if (!io.snowstamp.config.Keys.isKnown(key) || key.startsWith("kafka.")) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--footprint-set " + key + ": accepted a"
                        + " configuration key of the README other than kafka.* (give those with --set)");
            }
        }
        if (neighbourCores.stream().anyMatch(n -> n < 0 || n > MAX_NEIGHBOUR_CORES)
                || neighbourCores.stream().distinct().count() < neighbourCores.size()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--neighbour-cores " + neighbourCores
                    + ": busy loops per run, each count once, from 0 (no neighbour) to " + MAX_NEIGHBOUR_CORES);
        }
        if (footprintGuarantee == null) {
            return null;    // the settings' processing.guarantee, known once they are loaded
        }
        List<ConnectionSettings.Guarantee> chosen = new ArrayList<>();
        for (String g : footprintGuarantee) {
            ConnectionSettings.Guarantee guarantee = java.util.Arrays.stream(ConnectionSettings.Guarantee.values())
                    .filter(v -> v.name().equalsIgnoreCase(g.strip())).findFirst()
                    .orElseThrow(() -> new picocli.CommandLine.ParameterException(spec.commandLine(), "--footprint-guarantee "
                            + String.join(",", footprintGuarantee) + ": exactly_once_v2, at_least_once, or both, each once"));
            if (chosen.contains(guarantee)) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--footprint-guarantee "
                        + String.join(",", footprintGuarantee) + ": exactly_once_v2, at_least_once, or both, each once");
            }
            chosen.add(guarantee);
        }
        return chosen;
    }

    /**
     * The order of round {@code round}: rotated, so no case always runs first or last, and reversed every
     * other round, so no case always runs right after the same one (a run can slow the next, e.g. while
     * the broker still writes the previous run's output).
     */
    static <T> List<T> roundOrder(List<T> cases, int round) {
        List<T> order = new ArrayList<>(cases);
        java.util.Collections.rotate(order, round / 2);
        if (round % 2 == 1) {
            java.util.Collections.reverse(order);
        }
        return order;
    }

    /**
     * Records per run at values of {@code bytes}: {@code records} up to 256 bytes; above, as many as carry the bytes of
     * {@code records} values of 256 bytes.
     */
    static long recordsAt(long records, int bytes) {
        return bytes <= FULL_RECORDS_UP_TO ? records : Math.max(1, records * FULL_RECORDS_UP_TO / bytes);
    }
}
