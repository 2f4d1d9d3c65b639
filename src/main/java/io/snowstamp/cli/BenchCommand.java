package io.snowstamp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.Bench;
import io.snowstamp.bench.Bench.Settings;
import io.snowstamp.bench.Bench.Topo;
import io.snowstamp.bench.BenchResult;
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
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "bench", header = "Measures the stamper against a pass-through topology, in one run.",
        description = "Loads --records sample events (~80 bytes of JSON) into a fresh input topic, then runs in turn, each "
                + "with a fresh application id, output topic and state: the identity (pass-through) topology on Kafka "
                + "Streams' defaults and on snowstamp's shipped settings, snowstamp in header mode and in JSON mode "
                + "(shipped settings), snowstamp in header mode with the throughput profile, and (with --jackson) a "
                + "Jackson-tree + UUID app. Prints the steady rate (output records/s while the output grows from 10%% to "
                + "90%% of the input: start-up and the wait for the last commit left out), the ratio to the identity "
                + "topology on the same settings and to Kafka Streams' defaults, peak heap and the whole run's time; with "
                + "--latency-seconds also produce-to-read_committed p50/p99 at a steady "
                + "--latency-rate. All exactly-once. Every case runs once on up to 300,000 records first, to warm up the JIT. "
                + "Repeats --repeat times and reports medians; the last line is JSON. "
                + "Without --bootstrap-servers or --data-dir it uses a fresh embedded broker in a temporary directory "
                + "(in this JVM: peak heap then includes the broker; run 'snowstamp broker' in another process and pass "
                + "--bootstrap-servers to measure the stamper alone).",
        footer = {"", "Examples:", "  snowstamp bench --records 200000",
                "  snowstamp bench --bootstrap-servers 127.0.0.1:9092 --repeat 3"})
final class BenchCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--records", paramLabel = "N", defaultValue = "1000000", description = "records per run (default: ${DEFAULT-VALUE})")
    long records;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "4", description = "partitions of the bench topics (default: ${DEFAULT-VALUE})")
    int partitions;

    @Option(names = "--repeat", paramLabel = "R", defaultValue = "1", description = "repetitions; medians are reported (default: ${DEFAULT-VALUE})")
    int repeat;

    @Option(names = "--jackson", description = "also run the Jackson-tree + UUID app")
    boolean jackson;

    @Option(names = "--latency-seconds", paramLabel = "S", defaultValue = "0",
            description = "also measure latency for this many seconds per topology (default: off)")
    int latencySeconds;

    @Option(names = "--latency-rate", paramLabel = "R", defaultValue = "20000", description = "records/s in the latency runs (default: ${DEFAULT-VALUE})")
    int latencyRate;

    private record Case(String name, Topo topo, Settings settings, String baseline) {
    }

    @Override
    public Integer call() throws Exception {
        if (records < 1 || partitions < 1 || repeat < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--records, --partitions and --repeat must be >= 1");
        }
        PrintWriter out = spec.commandLine().getOut();
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
            Bench bench = new Bench(overrides -> {
                Map<String, String> all = new HashMap<>(flags);
                all.put("kafka.bootstrap.servers", servers);
                all.putAll(overrides);
                return options.load(all);
            }, partitions);
            out.println("loading " + records + " records into " + input + " (" + partitions + " partitions) at " + servers);
            out.flush();
            bench.load(records);

            List<Case> cases = new ArrayList<>(List.of(
                    new Case("identity, Kafka Streams defaults", Topo.IDENTITY, Settings.KAFKA_DEFAULTS, null),
                    new Case("identity, shipped settings", Topo.IDENTITY, Settings.SHIPPED, null),
                    new Case("snowstamp header, shipped", Topo.HEADER, Settings.SHIPPED, "identity, shipped settings"),
                    new Case("snowstamp json, shipped", Topo.JSON, Settings.SHIPPED, "identity, shipped settings"),
                    new Case("snowstamp header, throughput profile", Topo.HEADER, Settings.THROUGHPUT, null)));
            if (jackson) {
                cases.add(new Case("jackson tree + uuid, shipped", Topo.JACKSON_UUID, Settings.SHIPPED, "identity, shipped settings"));
            }
            // warm the JIT (the broker's too, when embedded) on every case first: one short warm-up left
            // the first repetition up to 2x slower than the next ones
            for (Case c : cases) {
                bench.throughput("warm-up", c.topo(), c.settings(), Math.min(records, 300_000));
            }
            Map<String, List<BenchResult>> runs = new LinkedHashMap<>();
            for (int r = 0; r < repeat; r++) {
                List<Case> order = new ArrayList<>(cases);
                java.util.Collections.rotate(order, r);     // no case always runs first or last
                for (Case c : order) {
                    BenchResult result = bench.throughput(c.name(), c.topo(), c.settings(), records);
                    runs.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(result);
                    out.printf("  run %d: %-40s %,10.0f records/s%n", r + 1, c.name(), result.recordsPerSecond());
                    out.flush();
                }
            }
            Map<String, BenchResult> medians = new LinkedHashMap<>();
            runs.forEach((name, results) -> medians.put(name, median(results)));
            double defaults = medians.get("identity, Kafka Streams defaults").recordsPerSecond();
            out.println();
            out.printf("%-40s %12s %14s %14s %10s %9s %11s%n", "topology (exactly-once)", "records/s", "x identity", "x id. defaults",
                    "peak heap", "whole run", "CPU/record");
            ArrayNode rows = JSON.createArrayNode();
            for (Case c : cases) {
                BenchResult m = medians.get(c.name());
                double sameSettings = c.baseline() == null ? Double.NaN
                        : m.recordsPerSecond() / medians.get(c.baseline()).recordsPerSecond();
                double vsDefaults = m.recordsPerSecond() / defaults;
                out.printf("%-40s %,12.0f %14s %14.2f %7d MiB %7.1f s %8.2f us%n", c.name(), m.recordsPerSecond(),
                        Double.isNaN(sameSettings) ? "-" : String.format("%.2f", sameSettings), vsDefaults, m.peakHeapMiB(), m.seconds(),
                        m.cpuMicros());
                ObjectNode row = rows.addObject();
                row.put("name", c.name());
                row.put("recordsPerSecond", Math.round(m.recordsPerSecond()));
                if (!Double.isNaN(sameSettings)) {
                    row.put("ratioSameSettings", Math.round(sameSettings * 1000) / 1000.0);
                }
                row.put("ratioIdentityDefaults", Math.round(vsDefaults * 1000) / 1000.0);
                row.put("peakHeapMiB", m.peakHeapMiB());
                row.put("wholeRunSeconds", Math.round(m.seconds() * 10) / 10.0);
                row.put("cpuMicrosPerRecord", Math.round(m.cpuMicros() * 100) / 100.0);
            }
            if (latencySeconds > 0) {
                out.println();
                out.printf("latency at %,d records/s for %d s (produce -> read_committed consume):%n", latencyRate, latencySeconds);
                List<BenchResult> latency = List.of(
                        bench.latency("identity, Kafka Streams defaults", Topo.IDENTITY, Settings.KAFKA_DEFAULTS, latencyRate, latencySeconds),
                        bench.latency("snowstamp header, shipped", Topo.HEADER, Settings.SHIPPED, latencyRate, latencySeconds),
                        bench.latency("snowstamp header, throughput profile", Topo.HEADER, Settings.THROUGHPUT, latencyRate, latencySeconds));
                double baseP99 = latency.get(0).p99Millis();
                for (BenchResult l : latency) {
                    out.printf("%-40s p50 %6.0f ms   p99 %6.0f ms   p99 x identity %.2f%n", l.name(), l.p50Millis(), l.p99Millis(),
                            l.p99Millis() / baseP99);
                    ObjectNode row = rows.addObject();
                    row.put("name", "latency: " + l.name());
                    row.put("p50Millis", l.p50Millis());
                    row.put("p99Millis", l.p99Millis());
                    row.put("p99RatioIdentityDefaults", Math.round(l.p99Millis() / baseP99 * 1000) / 1000.0);
                }
            }
            ObjectNode summary = JSON.createObjectNode();
            summary.put("records", records);
            summary.put("partitions", partitions);
            summary.put("repeat", repeat);
            summary.put("cores", Runtime.getRuntime().availableProcessors());
            summary.put("maxHeapMiB", Runtime.getRuntime().maxMemory() / (1024 * 1024));
            summary.set("results", rows);
            out.println(JSON.writeValueAsString(summary));
        }
        return 0;
    }

    private static BenchResult median(List<BenchResult> results) {
        List<BenchResult> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparingDouble(BenchResult::recordsPerSecond));
        return sorted.get(sorted.size() / 2);
    }
}
