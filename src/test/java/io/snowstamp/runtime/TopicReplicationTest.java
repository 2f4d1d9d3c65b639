package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.recovery.Replication;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopicReplicationTest {
    private static final Replication THREE_OF_FIVE = Replication.forBrokers(5);

    private static TopicSpec spec(String file) throws IOException {
        return TopicSpec.parse("events.stamped", new StringReader(file), "topics/events.stamped.properties");
    }

    private static TopicDescription topic(int replicas) {
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            nodes.add(new Node(i, "broker-" + i, 9092));
        }
        return new TopicDescription("events.stamped", false, List.of(new TopicPartitionInfo(0, nodes.get(0), nodes, nodes),
                new TopicPartitionInfo(1, nodes.get(0), nodes, nodes)));
    }

    private static Config minInsync(int value) {
        return new Config(List.of(new ConfigEntry("min.insync.replicas", Integer.toString(value))));
    }

    @Test
    void shouldReadAutoAsTheDefaultAndKeepMinusOneAndNumbers() throws IOException {
        assertThat(spec("partitions=4\n").replicationFactor()).isEqualTo(TopicSpec.AUTO);
        assertThat(spec("partitions=4\nreplication.factor=auto\n").replicationFactor()).isEqualTo(TopicSpec.AUTO);
        assertThat(spec("partitions=4\nreplication.factor=-1\n").replicationFactor()).isEqualTo(TopicSpec.BROKER_DEFAULT);
        assertThat(spec("partitions=4\nreplication.factor=2\n").replicationFactor()).isEqualTo((short) 2);
        for (String wrong : List.of("0", "33", "three")) {
            assertThatThrownBy(() -> spec("partitions=4\nreplication.factor=" + wrong + "\n")).isInstanceOf(SnowstampException.class)
                    .hasMessage("topics/events.stamped.properties: replication.factor=" + wrong + " is invalid: accepted auto (the default:"
                            + " min(3, brokers)), -1 (the broker's default.replication.factor) or 1..32");
        }
    }

    @Test
    void shouldGiveAutoTheClusterChoiceAFileFactorItsMinimumAndTheBrokerDefaultNothing() throws IOException {
        assertThat(TopicReplication.wanted(spec("partitions=4\n"), THREE_OF_FIVE)).contains(THREE_OF_FIVE);
        assertThat(TopicReplication.wanted(spec("partitions=4\nreplication.factor=2\n"), THREE_OF_FIVE))
                .contains(Replication.forFactor((short) 2));
        assertThat(TopicReplication.wanted(spec("partitions=4\nreplication.factor=-1\n"), THREE_OF_FIVE)).isEmpty();
        assertThat(TopicReplication.wanted(spec("partitions=4\nmin.insync.replicas=3\n"), THREE_OF_FIVE).orElseThrow().describe())
                .as("the file's own minimum wins").isEqualTo("replication.factor=3 min.insync.replicas=3 (auto: 3 of 5 brokers)");
    }

    @Test
    void shouldRefuseAFileMinimumAboveTheReplicasBeforeCreatingAnything() throws IOException {
        TopicSpec spec = spec("partitions=4\nmin.insync.replicas=2\n");
        assertThatThrownBy(() -> TopicReplication.wanted(spec, Replication.forBrokers(1))).isInstanceOf(SnowstampException.class)
                .hasMessage("topic events.stamped: min.insync.replicas=2 is invalid with replication.factor=1 (auto: 1 broker):"
                        + " accepted 1..1 (a higher minimum refuses every write; leave it out to get 1)");
    }

    @Test
    void shouldReportFewerReplicasThanTheClusterGivesAndALowMinimumAsDrift() throws IOException {
        TopicSpec auto = spec("partitions=4\n");
        assertThat(TopicReplication.drift(auto, Optional.of(THREE_OF_FIVE), topic(3), minInsync(2))).isEmpty();
        assertThat(TopicReplication.drift(auto, Optional.of(THREE_OF_FIVE), topic(5), minInsync(2))).as("more replicas are no drift")
                .isEmpty();
        assertThat(TopicReplication.drift(auto, Optional.of(THREE_OF_FIVE), topic(1), minInsync(1))).containsExactly(
                "replication.factor=1 but the cluster can give 3 (auto: 3 of 5 brokers); an existing topic keeps its replicas: add them"
                        + " with kafka-reassign-partitions.sh");
        assertThat(TopicReplication.drift(auto, Optional.of(THREE_OF_FIVE), topic(3), minInsync(1))).containsExactly(
                "min.insync.replicas=1 but 2 goes with 3 replicas (kafka-configs.sh --alter --entity-type topics --entity-name"
                        + " events.stamped --add-config min.insync.replicas=2)");
        assertThat(TopicReplication.actual(topic(3), minInsync(2))).isEqualTo("replication.factor=3 min.insync.replicas=2");
    }

    @Test
    void shouldCompareAFileFactorExactlyAndLeaveTheBrokerDefaultAlone() throws IOException {
        TopicSpec two = spec("partitions=4\nreplication.factor=2\n");
        assertThat(TopicReplication.drift(two, TopicReplication.wanted(two, THREE_OF_FIVE), topic(3), minInsync(2)))
                .containsExactly("replication.factor=3 but the spec says 2");
        TopicSpec brokerDefault = spec("partitions=4\nreplication.factor=-1\n");
        assertThat(TopicReplication.drift(brokerDefault, Optional.empty(), topic(1), minInsync(1))).isEmpty();
        TopicSpec own = spec("partitions=4\nmin.insync.replicas=1\n");
        assertThat(TopicReplication.drift(own, TopicReplication.wanted(own, THREE_OF_FIVE), topic(3), minInsync(1)))
                .as("a minimum the file sets is compared as any config of the file").isEmpty();
    }

    @Test
    void shouldShipTopicFilesThatLeaveReplicationToTheCluster() {
        for (TopicSpec shipped : TopicSpec.load(java.nio.file.Path.of("topics"))) {
            assertThat(shipped.replicationFactor()).as(shipped.name()).isEqualTo(TopicSpec.AUTO);
            assertThat(shipped.configs()).as(shipped.name()).doesNotContainKey("min.insync.replicas");
        }
        assertThat(TopicSpec.load(java.nio.file.Path.of("topics"))).extracting(TopicSpec::name)
                .containsExactlyElementsOf(TopicSpec.BUNDLED.stream().sorted().toList());
    }
}
