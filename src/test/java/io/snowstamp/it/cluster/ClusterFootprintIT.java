package io.snowstamp.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.cluster.KafkaCluster;
import io.snowstamp.testing.cluster.SharedCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a check of the default suite: {@code bench --footprint-partitions} (one stamper
 * instance's memory, threads, open files and state directory, the time until every partition has
 * stamped, and the failover time after SIGKILL) on the replicated three-node cluster instead of one
 * broker: replication factor 3 for the input, output and changelog, {@code min.insync.replicas=2}.
 * The bench runs inside the cluster's network namespace, so that it and its stampers reach the nodes
 * directly, as in production, not through the test's loopback bridge.
 *
 * <pre>
 * mvn -B verify -Dtest=none -Dit.test=ClusterFootprintIT -Dsurefire.failIfNoSpecifiedTests=false -Dcluster.footprint=64,1024
 * </pre>
 *
 * It passes when every partition stamped at the start and again after the failover (the bench
 * fails otherwise) and prints the table; benchmarks.md reports it beside the single-broker figures.
 */
@Tag("integration")
@Tag("full")   // -Pfull only, like every test on the three-node cluster (development.md)
@ExtendWith(SharedCluster.class)
@ResourceLock(SharedCluster.LOCK)
@EnabledIfSystemProperty(named = "cluster.footprint", matches = "[0-9]+(,[0-9]+)*")
class ClusterFootprintIT {
    private static final Path LOGS = Path.of("target", "fault-logs", "cluster-footprint");

    @Test
    void shouldMeasureOneInstancesFootprintAndFailoverOnTheReplicatedCluster(KafkaCluster cluster) throws Exception {
        String counts = System.getProperty("cluster.footprint");
        Path json = Files.createDirectories(LOGS).toAbsolutePath().resolve("footprint-" + System.nanoTime() + ".json");
        String name = "bench-" + counts.replace(',', '-');
        Files.deleteIfExists(LOGS.resolve(name + ".out"));     // the logs of an earlier run: this run's figures alone
        Files.deleteIfExists(LOGS.resolve(name + ".err"));
        try (ChildJvm bench = ChildJvm.start(LOGS, name, cluster.netns().exec(), List.of("-Xmx512m"),
                bench(counts, cluster.bootstrapServers()))) {
            int exit = bench.waitFor(30L * 60 * Arrays.stream(counts.split(",")).count());
            String output = bench.stdout();
            System.out.println("bench --footprint-partitions " + counts + " on the three-node cluster:\n" + output);
            assertThat(exit).as("bench exit\n%s", bench.logs()).isZero();
            Files.writeString(json, output.lines().filter(line -> line.startsWith("{")).reduce((a, b) -> b).orElse(""));
        }
        JsonNode rows = new ObjectMapper().readTree(json.toFile()).get("footprint");
        assertThat(rows).as("one row per partition count").hasSize(counts.split(",").length);
        for (JsonNode row : rows) {
            assertThat(row.get("allStampedSeconds").asDouble()).as("every partition stamped at the start").isPositive();
            assertThat(row.get("failoverSeconds").asDouble()).as("every partition stamped again after the failover").isPositive();
            assertThat(row.get("caughtUpSeconds").asDouble()).as("every partition stamped all it was sent after the failover")
                    .isGreaterThanOrEqualTo(row.get("failoverSeconds").asDouble());
        }
    }

    /** The bench's arguments; {@code -Dcluster.footprint.set=KEY=VALUE,...} adds settings to try (the stampers get the {@code kafka.*} ones). */
    private static String[] bench(String counts, String bootstrapServers) {
        List<String> args = new java.util.ArrayList<>(List.of("bench", "--footprint-partitions", counts, "--bootstrap-servers", bootstrapServers));
        for (String setting : System.getProperty("cluster.footprint.set", "").split(",")) {
            if (setting.contains("=")) {
                args.addAll(List.of("--set", setting));
            }
        }
        return args.toArray(String[]::new);
    }
}
