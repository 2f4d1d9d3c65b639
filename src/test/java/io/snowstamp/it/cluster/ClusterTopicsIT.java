package io.snowstamp.it.cluster;

import io.snowstamp.testing.Cli;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.cluster.KafkaCluster;
import io.snowstamp.testing.cluster.SharedCluster;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code topics apply} with the shipped {@code topics/} files on the three-node cluster: every topic
 * of the stamper (input, output, dead letters, tags, worker registry) gets three replicas and
 * {@code min.insync.replicas=2}, so an acknowledged write survives the loss of any one broker and
 * writes go on while one is down; and the command says what it chose.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: it starts the three-node cluster (development.md)
@ExtendWith(SharedCluster.class)
@ResourceLock(SharedCluster.LOCK)
class ClusterTopicsIT {
    private static final List<String> SHIPPED = List.of("events.raw", "events.stamped", "events.dlq", "snowstamp-tags", "snowstamp-workers");

    @Test
    void shouldGiveTheShippedTopicsThreeReplicasWithTwoInSync(KafkaCluster cluster) throws Exception {
        Cli.Result applied = Cli.run("topics", "apply", "--dir", Path.of("topics").toString(),
                "--bootstrap-servers", cluster.bootstrapServers());

        assertThat(applied.exitCode()).as(applied.toString()).isZero();
        for (String topic : SHIPPED) {
            // the shared cluster's stamper fixture may have created the worker registry from the same spec before: then "ok"
            assertThat(applied.outLines()).as(applied.toString())
                    .anyMatch(line -> line.startsWith("created " + topic + " ") && line.contains("replication.factor=3 min.insync.replicas=2")
                            && line.contains("(auto: 3 brokers)")
                            || line.equals("ok " + topic + " partitions=1 replication.factor=3 min.insync.replicas=2"));
            assertReplicatedOnEveryNode(cluster, topic);
        }
        Cli.Result again = Cli.run("topics", "apply", "--dir", Path.of("topics").toString(), "--check",
                "--bootstrap-servers", cluster.bootstrapServers());
        assertThat(again.exitCode()).as("no drift on a second look\n%s", again).isZero();
    }

    /** Three replicas in every partition, and {@code min.insync.replicas=2} set on the topic itself. */
    static void assertReplicatedOnEveryNode(KafkaCluster cluster, String topic) throws Exception {
        TopicDescription description = cluster.admin().describeTopics(List.of(topic)).allTopicNames()
                .get(60, TimeUnit.SECONDS).get(topic);
        description.partitions().forEach(partition ->
                assertThat(partition.replicas()).as("%s-%d replicas", topic, partition.partition()).hasSize(3));
        ConfigEntry minInsync = TestBroker.topicConfig(cluster.bootstrapServers(), topic, "min.insync.replicas");
        assertThat(Map.entry(minInsync.value(), minInsync.source())).as("%s min.insync.replicas", topic)
                .isEqualTo(Map.entry("2", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG));
    }
}
