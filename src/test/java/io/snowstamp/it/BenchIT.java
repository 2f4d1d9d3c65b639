package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bench} end to end on a small input: every case runs over the whole input and reports, the
 * table and the JSON line agree. Only that it works: no timing is asserted (src/site/markdown/benchmarks.md has the numbers).
 */
@Tag("integration")
@Order(9)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(600)
class BenchIT extends OnSharedBroker {
    @Test
    void shouldRunEveryCaseAndPrintTableAndJson() throws Exception {
        Path file = Files.createTempFile("bench", ".json");
        Cli.Result bench = Cli.run("bench", "--bootstrap-servers", broker.bootstrapServers(), "--records", "4000", "--partitions", "2",
                "--repeat", "2", "--jackson", "--latency-seconds", "3", "--latency-rate", "400", "--output-json", file.toString(),
                "--breakdown", "--broker-pid", Long.toString(ProcessHandle.current().pid()));     // the shared broker runs in this JVM
        assertThat(bench.exitCode()).as(bench.toString()).isZero();
        assertThat(bench.out()).contains("loading 4000 records", "identity, Kafka Streams defaults", "snowstamp header, shipped",
                "snowstamp json, shipped", "snowstamp header, throughput profile", "jackson tree + uuid, shipped",
                "latency at 400 records/s for 3 s");

        JsonNode json = new ObjectMapper().readTree(bench.lastLine());
        assertThat(new ObjectMapper().readTree(Files.readString(file))).isEqualTo(json);
        assertThat(json.get("repeat").asInt()).isEqualTo(2);
        assertThat(json.get("brokerInThisProcess").asBoolean()).isFalse();
        assertThat(json.get("records").asLong()).isEqualTo(4000);
        assertThat(json.get("partitions").asInt()).isEqualTo(2);
        List<String> names = new ArrayList<>();
        for (JsonNode result : json.get("results")) {
            String name = result.get("name").asText();
            names.add(name);
            if (name.startsWith("latency: ")) {
                assertThat(result.get("p50Millis").asDouble()).as(name).isPositive();
                assertThat(result.get("p99Millis").asDouble()).as(name).isGreaterThanOrEqualTo(result.get("p50Millis").asDouble());
            } else {
                assertThat(result.get("recordsPerSecond").asDouble()).as(name).isPositive();
                assertThat(result.get("peakHeapMiB").asLong()).as(name).isPositive();
                assertThat(result.get("roundsRecordsPerSecond")).as(name).hasSize(2);
                assertThat(result.get("brokerCpuMicrosPerRecord").asDouble()).as(name).isPositive();
                if (name.startsWith("snowstamp json") || name.startsWith("snowstamp header, shipped")
                        || name.startsWith("snowstamp header, compact")) {
                    // ratios to the pass-through of the same round, and the goal next to them (whether met is not asserted)
                    assertThat(result.get("ratioSameSettings").asDouble()).as(name).isPositive();
                    assertThat(result.get("cpuRatioSameSettings").asDouble()).as(name).isPositive();
                    assertThat(result.has("throughputGoalMet")).as(name).isTrue();
                }
            }
        }
        assertThat(names).containsExactly("identity, Kafka Streams defaults", "identity, shipped settings", "snowstamp header, shipped",
                "snowstamp header, no provenance", "snowstamp json, shipped", "snowstamp header, compact headers",
                "snowstamp json, compact headers", "snowstamp header, throughput profile", "forward, no headers",
                "forward + 2 headers, no ID issued", "jackson tree + uuid, shipped", "latency: identity, Kafka Streams defaults", "latency: snowstamp header, shipped",
                "latency: snowstamp header, throughput profile");
    }

    @Test
    void shouldRefuseNonsenseCounts() {
        Cli.Result bench = Cli.run("bench", "--bootstrap-servers", broker.bootstrapServers(), "--records", "0");
        assertThat(bench.exitCode()).isEqualTo(2);
        assertThat(bench.err()).contains("--records, --partitions and --repeat must be >= 1");
    }
}
