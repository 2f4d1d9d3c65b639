package io.snowstamp.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.Bench;
import io.snowstamp.bench.Bench.Settings;
import io.snowstamp.bench.Bench.Topo;
import io.snowstamp.bench.BenchResult;
import io.snowstamp.bench.BenchSummary;
import io.snowstamp.bench.BenchSummary.Case;
import io.snowstamp.bench.Footprint;
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
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "bench", header = "Measures the stamper against a pass-through topology, in one run.",
        description = "Loads --records sample events (~80 bytes of JSON) into a fresh input topic, then runs --repeat rounds; "
                + "each round runs every case once, in rotated order (reversed every other round), each with a fresh "
                + "application id, output topic and state: the identity (pass-through) topology on Kafka Streams' "
                + "defaults and on snowstamp's shipped settings, snowstamp in header mode, in header mode without the provenance header, in JSON mode "
                + "and in both modes with stamp.header-format=compact (shipped settings), in header mode with the throughput profile, and (with --jackson) a Jackson-tree + "
                + "UUID app. All exactly-once, with the same client settings as the pass-through they are compared with. "
                + "Every case first runs once on up to 300,000 records, to warm up the JIT. For each case: the steady rate "
                + "(output records/s while the output grows from 10%% to 90%% of the input: start-up and the wait for the "
                + "last commit left out) and this process's CPU time per record in that window (the stamper's own "
                + "process: all its threads, not the broker's, unless the broker is embedded in this process), each as "
                + "the median over the rounds and as a ratio to the pass-through of the same round (median, lowest and "
                + "highest), next to the goal where there is one; peak heap and the whole run's time. With "
                + "--latency-seconds also produce-to-read_committed p50/p99 at a steady --latency-rate. "
                + "--format json prints one JSON document instead of the tables (progress goes to stderr); "
                + "--output-json also writes it to a file. Without --bootstrap-servers or --data-dir it uses a fresh "
                + "embedded broker in a temporary directory, in this JVM: CPU and peak heap then include the broker's. "
                + "Run 'snowstamp broker' in another process (or use your cluster) and pass --bootstrap-servers to "
                + "measure the stamper alone, as in production.",
        footer = {"", "Examples:", "  snowstamp bench --records 200000 --repeat 1",
                "  snowstamp bench --bootstrap-servers 127.0.0.1:9092 --repeat 5 --output-json bench.json",
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

    @Option(names = "--jackson", description = "also run the Jackson-tree + UUID app")
    boolean jackson;

    @Option(names = "--latency-seconds", paramLabel = "S", defaultValue = "0",
            description = "also measure latency for this many seconds per topology (default: off)")
    int latencySeconds;

    @Option(names = "--latency-rate", paramLabel = "R", defaultValue = "20000", description = "records/s in the latency runs (default: ${DEFAULT-VALUE})")
    int latencyRate;

    @Option(names = "--breakdown", description = "also run two cases that split what stamping costs: the stamper's topology with a "
            + "processor that only forwards each record to its aligned output partition, and the same adding snowstamp's two "
            + "headers as the stamper writes them but without issuing IDs: the processor node and its partitioner, then the two "
            + "headers, then the rest (IDs, state, checks)")
    boolean breakdown;

    @Option(names = "--broker-pid", paramLabel = "PID", description = "the process id of the broker, when it runs on this machine "
            + "(e.g. 'snowstamp broker'): its CPU time per record is measured too, per case and as a ratio to the pass-through's "
            + "(default: not measured)")
    Long brokerPid;

    @Option(names = "--format", paramLabel = "F", defaultValue = "table",
            description = "table (for a terminal; its last line is the JSON document too) or json (only the JSON document on "
                    + "stdout) (default: ${DEFAULT-VALUE})")
    ChangelogCommand.Format format;

    @Option(names = "--output-json", paramLabel = "FILE", description = "also write the JSON document to FILE (default: none)")
    Path outputJson;

    private static final String PASS_THROUGH = "identity, shipped settings";

    @Option(names = "--footprint-partitions", paramLabel = "N", split = ",",
            description = "instead of the throughput runs: one stamper instance's footprint (resident memory, threads, open files, "
                    + "state directory, time until every partition stamped, failover time) at each partition count, e.g. 64,256,1024 "
                    + "(default: none)")
    List<Integer> footprintPartitions;

    @Option(names = "--footprint-java-options", paramLabel = "OPTS", defaultValue = "-Xmx768m",
            description = "JVM options of the measured stamper processes (default: ${DEFAULT-VALUE}, the heap of a 1 GiB container "
                    + "with the image's -XX:MaxRAMPercentage=75)")
    String footprintJavaOptions;

    @Override
    public Integer call() throws Exception {
        if (records < 1 || partitions < 1 || repeat < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--records, --partitions and --repeat must be >= 1");
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
        SnowstampConfig loaded = options.load(flags);
        options.configOptions.requireIssuableLayout();
        try (KafkaOptions.Connection connection = options.connect(loaded, 0)) {
            String servers = connection.config().connection().kafka().get("bootstrap.servers");
            if (footprintPartitions != null) {
                return footprint(connection.config(), out, progress);
            }
            Bench bench = new Bench(overrides -> {
                Map<String, String> all = new HashMap<>(flags);
                all.put("kafka.bootstrap.servers", servers);
                all.putAll(overrides);
                return options.load(all);
            }, partitions, broker);
            double loadBefore = BenchOutput.loadAverage();
            progress.println("loading " + records + " records into " + input + " (" + partitions + " partitions) at " + servers);
            progress.flush();
            bench.load(records);

            List<Case> cases = cases();
            // warm the JIT (the broker's too, when embedded) on every case first: one short warm-up left
            // the first repetition up to 2x slower than the next ones
            for (Case c : cases) {
                bench.throughput("warm-up", c.topo(), c.settings(), Math.min(records, 300_000));
            }
            BenchSummary summary = new BenchSummary(cases);
            for (int r = 0; r < repeat; r++) {
                List<Case> order = roundOrder(cases, r);
                for (Case c : order) {
                    BenchResult result = bench.throughput(c.name(), c.topo(), c.settings(), records);
                    summary.add(c, result);
                    progress.printf("  round %d: %-40s %,10.0f records/s %7.2f us CPU/record%n", r + 1, c.name(),
                            result.recordsPerSecond(), result.cpuMicros());
                    progress.flush();
                }
            }
            List<BenchResult> latency = latencySeconds <= 0 ? List.of() : List.of(
                    bench.latency("identity, Kafka Streams defaults", Topo.IDENTITY, Settings.KAFKA_DEFAULTS, latencyRate, latencySeconds),
                    bench.latency("snowstamp header, shipped", Topo.HEADER, Settings.SHIPPED, latencyRate, latencySeconds),
                    bench.latency("snowstamp header, throughput profile", Topo.HEADER, Settings.THROUGHPUT, latencyRate, latencySeconds));
            BenchOutput output = new BenchOutput(summary.rows(), latency, latencyRate, latencySeconds);
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

    private int footprint(SnowstampConfig config, PrintWriter out, PrintWriter progress) throws Exception {
        if (footprintPartitions.stream().anyMatch(n -> n < 1)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--footprint-partitions must be >= 1 each");
        }
        Footprint footprint = new Footprint(config.connection(), Files.createTempDirectory("snowstamp-footprint"),
                List.of(footprintJavaOptions.trim().split("\\s+")), Main.class.getName(), java.time.Duration.ofMinutes(10));
        List<Footprint.Figures> rows = new ArrayList<>();
        for (int n : footprintPartitions) {
            progress.println("measuring one stamper instance on " + n + " partitions at "
                    + config.connection().kafka().get("bootstrap.servers"));
            progress.flush();
            rows.add(footprint.measure(n));
        }
        if (format == ChangelogCommand.Format.table) {
            Footprint.printTable(rows, out);
        }
        out.println(Footprint.json(rows));
        return 0;
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

    private List<Case> cases() {
        List<Case> cases = new ArrayList<>(List.of(
                new Case("identity, Kafka Streams defaults", Topo.IDENTITY, Settings.KAFKA_DEFAULTS),
                new Case(PASS_THROUGH, Topo.IDENTITY, Settings.SHIPPED),
                // the goals of issue 16: at most 10% (header) / 20% (JSON) of a pass-through's throughput, and
                // at most 15% / 35% more CPU per record in the stamper's process
                new Case("snowstamp header, shipped", Topo.HEADER, Settings.SHIPPED, PASS_THROUGH, 0.90, 1.15),
                new Case("snowstamp header, no provenance", Topo.HEADER_NO_PROVENANCE, Settings.SHIPPED, PASS_THROUGH, Double.NaN,
                        Double.NaN),
                new Case("snowstamp json, shipped", Topo.JSON, Settings.SHIPPED, PASS_THROUGH, 0.80, 1.35),
                new Case("snowstamp header, compact headers", Topo.HEADER_COMPACT, Settings.SHIPPED, PASS_THROUGH, 0.90, 1.15),
                new Case("snowstamp json, compact headers", Topo.JSON_COMPACT, Settings.SHIPPED, PASS_THROUGH, 0.80, 1.35),
                new Case("snowstamp header, throughput profile", Topo.HEADER, Settings.THROUGHPUT)));
        if (breakdown) {
            cases.add(new Case("forward, no headers", Topo.FORWARD, Settings.SHIPPED, PASS_THROUGH, Double.NaN, Double.NaN));
            cases.add(new Case("forward + 2 headers, no ID issued", Topo.FORWARD_HEADERS, Settings.SHIPPED, PASS_THROUGH, Double.NaN,
                    Double.NaN));
        }
        if (jackson) {
            cases.add(new Case("jackson tree + uuid, shipped", Topo.JACKSON_UUID, Settings.SHIPPED, PASS_THROUGH, Double.NaN, Double.NaN));
        }
        return cases;
    }
}
