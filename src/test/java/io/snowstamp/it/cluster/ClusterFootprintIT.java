package io.snowstamp.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.cluster.KafkaCluster;
import io.snowstamp.testing.cluster.SharedCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

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
 * With {@code -Dcluster.footprint-rate=R} it measures the busy failover instead ({@code bench --footprint-rate R}: R
 * records per partition per second on every partition for the whole run, the stamper and, before it, a Kafka Streams
 * pass-through with the same settings, the floor; {@code -Dcluster.footprint.floor=off}: the stamper alone):
 *
 * <pre>
 * mvn -B verify -Dtest=none -Dit.test=ClusterFootprintIT -Dsurefire.failIfNoSpecifiedTests=false -Dcluster.footprint=1024 -Dcluster.footprint-rate=1
 * </pre>
 *
 * It passes when every partition stamped at the start and again after the failover (the bench
 * fails otherwise), every topic of the runs (the changelog Kafka Streams creates too) had three replicas
 * and {@code min.insync.replicas=2}, and, busy, nothing was missing, stamped twice or given an ID twice; it
 * prints the bench's figures; benchmarks.md reports them beside the single-broker ones.
 */
@Tag("integration")
@Tag("full")   // -Pfull only, like every test on the three-node cluster (development.md)
@ExtendWith(SharedCluster.class)
@ResourceLock(SharedCluster.LOCK)
@EnabledIfSystemProperty(named = "cluster.footprint", matches = "[0-9]+(,[0-9]+)*")
class ClusterFootprintIT {
    private static final Path LOGS = Path.of("target", "fault-logs", "cluster-footprint");
    /** The bench names each run's topics (and so the changelog Kafka Streams creates) with one of these. */
    private static final List<String> RUN_PREFIXES = List.of("snowstamp-footprint-", "snowstamp-busy-");

    @Test
    void shouldMeasureOneInstancesFootprintAndFailoverOnTheReplicatedCluster(KafkaCluster cluster) throws Exception {
        String counts = System.getProperty("cluster.footprint");
        String rate = System.getProperty("cluster.footprint-rate", "");
        boolean busy = !rate.isBlank();
        boolean floor = busy && !"off".equals(System.getProperty("cluster.footprint.floor"));
        int runs = counts.split(",").length * (floor ? 2 : 1);     // busy: the floor's run and the stamper's
        Path json = Files.createDirectories(LOGS).toAbsolutePath().resolve("footprint-" + System.nanoTime() + ".json");
        String name = "bench-" + counts.replace(',', '-') + (busy ? "-rate-" + rate : "");
        Files.deleteIfExists(LOGS.resolve(name + ".out"));     // the logs of an earlier run: this run's figures alone
        Files.deleteIfExists(LOGS.resolve(name + ".err"));
        try (Replicas replicas = new Replicas(cluster.admin());
             ChildJvm bench = ChildJvm.start(LOGS, name, cluster.netns().exec(), List.of("-Xmx512m"),
                     bench(counts, rate, floor, cluster.bootstrapServers()))) {
            int exit = bench.waitFor(30L * 60 * runs);
            String output = bench.stdout();
            System.out.println("bench --footprint-partitions " + counts + (busy ? " --footprint-rate " + rate : "")
                    + " on the three-node cluster:\n" + output);
            replicas.print();       // also when the bench failed: what the cluster held meanwhile
            assertThat(exit).as("bench exit\n%s", bench.logs()).isZero();
            Files.writeString(json, output.lines().filter(line -> line.startsWith("{")).reduce((a, b) -> b).orElse(""));
            replicas.assertEveryTopicReplicated(counts.split(",").length);
        }
        JsonNode document = new ObjectMapper().readTree(json.toFile());
        if (busy) {
            assertBusy(document.get("busyFailover"), runs, counts.split(",").length);
        } else {
            assertFootprint(document.get("footprint"), runs);
        }
    }

    private static void assertFootprint(JsonNode rows, int runs) {
        assertThat(rows).as("one row per partition count").hasSize(runs);
        for (JsonNode row : rows) {
            assertThat(row.get("allStampedSeconds").asDouble()).as("every partition stamped at the start").isPositive();
            assertThat(row.get("failoverSeconds").asDouble()).as("every partition stamped again after the failover").isPositive();
            assertThat(row.get("caughtUpSeconds").asDouble()).as("every partition stamped all it was sent after the failover")
                    .isGreaterThanOrEqualTo(row.get("failoverSeconds").asDouble());
        }
    }

    /** The bench's busy rows ({@code BusyFailover.Figures}): the floor's (unless turned off), then the stamper's, per partition count. */
    private static void assertBusy(JsonNode rows, int runs, int stamperRuns) {
        assertThat(rows).as("the floor's row and the stamper's per partition count").hasSize(runs);
        assertThat(rows.findValuesAsText("subject")).as("subjects").containsOnly("PASS_THROUGH", "STAMPER")
                .filteredOn("STAMPER"::equals).hasSize(stamperRuns);
        for (JsonNode row : rows) {
            String subject = row.get("subject").asText();
            assertThat(row.get("startSeconds").asDouble()).as("%s: every partition stamped at the start", subject).isPositive();
            assertThat(row.get("failoverSeconds").asDouble()).as("%s: every partition stamped a record produced after the kill",
                    subject).isPositive();
            assertThat(row.get("caughtUpSeconds").asDouble()).as("%s: then one produced after the failover", subject)
                    .isGreaterThanOrEqualTo(row.get("failoverSeconds").asDouble());
            assertThat(row.get("produced").asLong()).as("%s: records produced", subject).isPositive();
            assertThat(row.get("missing").asLong()).as("%s: records missing from the output", subject).isZero();
            assertThat(row.get("restamped").asLong()).as("%s: records stamped twice (exactly-once)", subject).isZero();
            assertThat(row.get("duplicateIds").asLong()).as("%s: ID values issued twice", subject).isZero();
        }
    }

    /** The bench's arguments; {@code -Dcluster.footprint.set=KEY=VALUE,...} adds settings to try (the stampers get the {@code kafka.*} ones). */
    private static String[] bench(String counts, String rate, boolean floor, String bootstrapServers) {
        List<String> args = new ArrayList<>(List.of("bench", "--footprint-partitions", counts, "--bootstrap-servers", bootstrapServers));
        if (!rate.isBlank()) {
            args.addAll(List.of("--footprint-rate", rate));
            if (!floor) {
                args.add("--no-footprint-floor");
            }
        }
        for (String setting : System.getProperty("cluster.footprint.set", "").split(",")) {
            if (setting.contains("=")) {
                args.addAll(List.of("--set", setting));
            }
        }
        return args.toArray(String[]::new);
    }

    /**
     * Watches the cluster while the bench runs (it deletes its topics after each run): the replication factor and
     * {@code min.insync.replicas} of every topic a run made, the changelog Kafka Streams creates for the stamper among them.
     */
    private static final class Replicas implements AutoCloseable {
        private final Admin admin;
        private final Map<String, String> seen = new ConcurrentHashMap<>();    // topic -> "replicas=R min.insync.replicas=M"
        private final Thread thread;
        private volatile boolean running = true;

        Replicas(Admin admin) {
            this.admin = admin;
            thread = new Thread(() -> {
                while (running) {
                    look();
                    try {
                        Thread.sleep(3000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "cluster-footprint-replicas");
            thread.setDaemon(true);
            thread.start();
        }

        private void look() {
            try {
                List<String> fresh = admin.listTopics().names().get(30, TimeUnit.SECONDS).stream()
                        .filter(t -> RUN_PREFIXES.stream().anyMatch(t::startsWith) && !seen.containsKey(t)).toList();
                if (fresh.isEmpty()) {
                    return;
                }
                Map<String, TopicDescription> described = admin.describeTopics(fresh).allTopicNames().get(30, TimeUnit.SECONDS);
                Map<ConfigResource, Config> configs = admin.describeConfigs(fresh.stream()
                        .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList()).all().get(30, TimeUnit.SECONDS);
                described.forEach((topic, description) -> {
                    var counts = description.partitions().stream().mapToInt(p -> p.replicas().size()).summaryStatistics();
                    seen.put(topic, "replicas=" + counts.getMin() + "-" + counts.getMax() + " min.insync.replicas="
                            + configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic)).get("min.insync.replicas").value());
                });
            } catch (Exception e) {
                // a run's topics were deleted between the listing and the description: the next look sees the next run's
            }
        }

        /** Every topic seen had three replicas on every partition and min.insync.replicas=2; at least {@code changelogs} changelogs among them. */
        void print() {
            running = false;
            System.out.println("topics of the runs: " + seen);
        }

        void assertEveryTopicReplicated(int changelogs) {
            assertThat(seen).as("topics of the runs seen on the cluster").isNotEmpty();
            assertThat(seen).as("replication of the runs' topics").allSatisfy((topic, replication) ->
                    assertThat(replication).as(topic).isEqualTo("replicas=3-3 min.insync.replicas=2"));
            assertThat(seen.keySet().stream().filter(t -> t.endsWith("-changelog")))
                    .as("the stamper's worker-state changelog, made by Kafka Streams").hasSizeGreaterThanOrEqualTo(changelogs);
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(10_000);
        }
    }
}
