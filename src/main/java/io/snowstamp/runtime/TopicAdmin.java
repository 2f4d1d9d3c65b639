package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.recovery.Replication;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Creates topics from their specs, reports drift, and checks the input/output alignment. */
public final class TopicAdmin {
    private static final long TIMEOUT_SECONDS = 60;

    private TopicAdmin() {
    }

    /**
     * Creates missing topics and compares existing ones with their spec. A spec with
     * {@code replication.factor=auto} gets {@link Replication#of the cluster's choice}; any spec with
     * a known factor gets the {@code min.insync.replicas} that goes with it unless it sets its own.
     * An existing topic is never changed: fewer replicas or a lower {@code min.insync.replicas} than
     * wanted is drift.
     *
     * @return one line per topic: {@code created NAME partitions=P replication.factor=R min.insync.replicas=M ...},
     *         {@code ok NAME ...} or {@code drift NAME: ...}
     */
    public static List<String> apply(Admin admin, Collection<TopicSpec> specs) {
        Replication cluster = Replication.of(admin, java.time.Duration.ofSeconds(TIMEOUT_SECONDS));
        List<String> report = new ArrayList<>();
        for (TopicSpec spec : specs) {
            Optional<Replication> replication = TopicReplication.wanted(spec, cluster);
            Optional<TopicDescription> existing = describe(admin, spec.name());
            if (existing.isEmpty()) {
                create(admin, spec, replication);
                report.add("created " + spec.name() + " partitions=" + spec.partitions() + " "
                        + replication.map(Replication::describe).orElse("replication.factor=broker-default"));
            } else {
                Config actual = configs(admin, spec.name());
                List<String> drift = drift(spec, existing.get(), actual);
                drift.addAll(TopicReplication.drift(spec, replication, existing.get(), actual));
                report.add(drift.isEmpty() ? "ok " + spec.name() + " partitions=" + existing.get().partitions().size() + " "
                        + TopicReplication.actual(existing.get(), actual)
                        : "drift " + spec.name() + ": " + String.join("; ", drift));
            }
        }
        return report;
    }

    /**
     * Fails with a clear message unless both topics exist and have the same partition count.
     *
     * @return the partition count
     */
    public static int checkAligned(Admin admin, String input, String output) {
        TopicDescription in = describe(admin, input).orElseThrow(() -> missing(input));
        TopicDescription out = describe(admin, output).orElseThrow(() -> missing(output));
        if (in.partitions().size() != out.partitions().size()) {
            throw new SnowstampException("input topic " + input + " has " + in.partitions().size() + " partitions but output topic "
                    + output + " has " + out.partitions().size() + ": they must be equal, because output partition p"
                    + " receives exactly the records of input partition p (add partitions to " + output + ")");
        }
        return in.partitions().size();
    }

    /** The fewest replicas of any partition of a topic, or empty when it does not exist. */
    public static Optional<Integer> replicas(Admin admin, String topic) {
        return describe(admin, topic).map(TopicReplication::replicas);
    }

    /** Partition count of a topic, or empty when it does not exist. */
    public static Optional<Integer> partitions(Admin admin, String topic) {
        return describe(admin, topic).map(d -> d.partitions().size());
    }

    private static SnowstampException missing(String topic) {
        return new SnowstampException("topic " + topic + " does not exist: create it with 'snowstamp topics apply'"
                + " (files in topics/) or your own tooling");
    }

    private static void create(Admin admin, TopicSpec spec, Optional<Replication> replication) {
        Map<String, String> configs = new HashMap<>(spec.configs());
        replication.ifPresent(r -> configs.putIfAbsent(Replication.MIN_INSYNC_REPLICAS, Integer.toString(r.minInsyncReplicas())));
        NewTopic topic = new NewTopic(spec.name(), Optional.of(spec.partitions()), replication.map(Replication::factor))
                .configs(configs);
        try {
            get(admin.createTopics(Set.of(topic)).all(), "create topic " + spec.name());
        } catch (SnowstampException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        awaitWritable(admin, spec.name());
    }

    /** A created topic takes writes only once its leaders opened its partitions: see {@link ChangelogWriter#awaitLeaders}. */
    private static void awaitWritable(Admin admin, String topic) {
        TopicDescription description = awaitVisible(admin, topic);
        ChangelogWriter.awaitLeaders(admin, topic, description.partitions().size(), java.time.Duration.ofSeconds(TIMEOUT_SECONDS));
    }

    private static TopicDescription awaitVisible(Admin admin, String topic) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        Optional<TopicDescription> description;
        while ((description = describe(admin, topic)).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new SnowstampException("topic " + topic + " was created but is not visible after " + TIMEOUT_SECONDS + " s");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SnowstampException("interrupted while waiting for topic " + topic, e);
            }
        }
        return description.get();
    }

    private static List<String> drift(TopicSpec spec, TopicDescription description, Config actual) {
        List<String> drift = new ArrayList<>();
        int partitions = description.partitions().size();
        if (partitions != spec.partitions()) {
            drift.add("partitions=" + partitions + " but the spec says " + spec.partitions());
        }
        spec.configs().forEach((key, wanted) -> {
            ConfigEntry entry = actual.get(key);
            String value = entry == null ? null : entry.value();
            if (!wanted.equals(value)) {
                drift.add(key + "=" + value + " but the spec says " + wanted);
            }
        });
        return drift;
    }

    /** The topic's effective configs (its own and the broker defaults it inherits). */
    static Config configs(Admin admin, String topic) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return get(admin.describeConfigs(Set.of(resource)).all(), "describe topic " + topic).get(resource);
    }

    private static Optional<TopicDescription> describe(Admin admin, String topic) {
        try {
            return Optional.of(get(admin.describeTopics(Set.of(topic)).allTopicNames(), "describe topic " + topic).get(topic));
        } catch (SnowstampException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    static <T> T get(org.apache.kafka.common.KafkaFuture<T> future, String what) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw new SnowstampException("cannot " + what + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new SnowstampException("cannot " + what + ": no answer from Kafka in " + TIMEOUT_SECONDS + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while trying to " + what, e);
        }
    }
}
