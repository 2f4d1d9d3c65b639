package io.snowstamp.runtime;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.cluster.KafkaCluster;
import io.snowstamp.testing.cluster.KafkaNode;
import io.snowstamp.testing.cluster.SharedCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, Replication: "the stamper logs a WARN at start when its changelog has fewer replicas than the cluster
 * can give". On the three-node cluster, the start's topic check ({@link TopicPreflight}) against a worker-state
 * changelog of one replica (what a changelog created on a one-broker cluster, or with an old setting, keeps) and against
 * one of three.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: it needs the three-node cluster (development.md)
@ExtendWith(SharedCluster.class)
@ResourceLock(SharedCluster.LOCK)
class UnderReplicatedChangelogIT {

    @Test
    void shouldWarnAtStartWhenTheChangelogHasFewerReplicasThanTheClusterCanGive(KafkaCluster cluster) throws Exception {
        assertThat(warnings(cluster, 1)).as("one replica of three possible")
                .anyMatch(line -> line.contains("has 1 replica(s) but the cluster can give 3")
                        && line.contains("kafka-reassign-partitions.sh") && line.contains("min.insync.replicas=2"));
        assertThat(warnings(cluster, 3)).as("three replicas: nothing to say").noneMatch(line -> line.contains("replica(s)"));
    }

    /** The WARN lines of the topic check of a new application whose changelog exists with {@code replicas} replicas. */
    private static List<String> warnings(KafkaCluster cluster, int replicas) throws Exception {
        String app = TestBroker.unique("replicas");
        List<Integer> nodes = cluster.nodes().stream().map(KafkaNode::id).toList();
        List<List<Integer>> full = Collections.nCopies(2, nodes);
        for (String topic : List.of(app + "-in", app + "-out", app + "-dlq")) {
            cluster.createTopic(topic, full, Map.of());
        }
        cluster.createTopic(Names.changelogTopic(app), Collections.nCopies(2, nodes.subList(0, replicas)), Map.of("cleanup.policy", "compact"));
        Logger logger = io.snowstamp.testing.Logback.logger(TopicPreflight.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        try {
            TopicPreflight.check(ConfigLoader.load(null, Map.of(), Map.of("kafka.bootstrap.servers", cluster.bootstrapServers(),
                    "application.id", app, "input.topic", app + "-in", "output.topic", app + "-out", "dlq.topic", app + "-dlq")));
        } finally {
            logger.detachAppender(events);
        }
        return events.list.stream().filter(event -> event.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage).toList();
    }
}
