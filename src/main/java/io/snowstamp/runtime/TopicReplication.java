package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.recovery.Replication;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The replication a topic file asks for, and how an existing topic differs from it: the part of
 * {@link TopicAdmin#apply} about replicas and {@code min.insync.replicas}. Pure but for the Kafka
 * value types it reads.
 */
final class TopicReplication {
    private TopicReplication() {
    }

    /**
     * What a new topic of {@code spec} gets: the cluster's choice for {@code auto}, the file's factor
     * otherwise, each with the {@code min.insync.replicas} that goes with it unless the file sets
     * one; empty for {@code -1} (the broker decides).
     *
     * @throws SnowstampException when the file's {@code min.insync.replicas} is not a number from 1 to the factor
     *         (a higher minimum refuses every {@code acks=all} write)
     */
    static Optional<Replication> wanted(TopicSpec spec, Replication cluster) {
        if (spec.replicationFactor() == TopicSpec.BROKER_DEFAULT) {
            return Optional.empty();
        }
        Replication chosen = spec.replicationFactor() == TopicSpec.AUTO ? cluster : Replication.forFactor(spec.replicationFactor());
        String own = spec.configs().get(Replication.MIN_INSYNC_REPLICAS);
        if (own == null) {
            return Optional.of(chosen);
        }
        int minimum;
        try {
            minimum = Integer.parseInt(own);
        } catch (NumberFormatException e) {
            minimum = 0;
        }
        if (minimum < 1 || minimum > chosen.factor()) {
            throw new SnowstampException("topic " + spec.name() + ": " + Replication.MIN_INSYNC_REPLICAS + "=" + own + " is invalid with"
                    + " replication.factor=" + chosen.factor() + (chosen.brokers() == 0 ? "" : " (" + chosen.why() + ")") + ": accepted 1.."
                    + chosen.factor() + " (a higher minimum refuses every write; leave it out to get " + chosen.minInsyncReplicas() + ")");
        }
        return Optional.of(new Replication(chosen.factor(), minimum, chosen.brokers()));
    }

    /**
     * How an existing topic falls short of {@code wanted}: fewer replicas than the cluster can give
     * ({@code auto}) or another count than the file's, and, when the file sets no
     * {@code min.insync.replicas}, a lower one than goes with the replicas the topic has.
     */
    static List<String> drift(TopicSpec spec, Optional<Replication> wanted, TopicDescription description, Config configs) {
        List<String> drift = new ArrayList<>();
        if (wanted.isEmpty()) {
            return drift;
        }
        int replicas = replicas(description);
        Replication want = wanted.get();
        if (spec.replicationFactor() == TopicSpec.AUTO ? replicas < want.factor() : replicas != want.factor()) {
            drift.add("replication.factor=" + replicas + (spec.replicationFactor() == TopicSpec.AUTO
                    ? " but the cluster can give " + want.factor() + " (" + want.why()
                      + "); an existing topic keeps its replicas: add them with kafka-reassign-partitions.sh"
                    : " but the spec says " + want.factor()));
        }
        if (!spec.configs().containsKey(Replication.MIN_INSYNC_REPLICAS)) {
            int minimum = minInsync(configs);
            int goes = Replication.minInsyncFor(replicas);
            if (minimum < goes) {
                drift.add(Replication.MIN_INSYNC_REPLICAS + "=" + minimum + " but " + goes + " goes with " + replicas + " replicas"
                        + " (kafka-configs.sh --alter --entity-type topics --entity-name " + spec.name() + " --add-config "
                        + Replication.MIN_INSYNC_REPLICAS + "=" + goes + ")");
            }
        }
        return drift;
    }

    /** {@code replication.factor=R min.insync.replicas=M} of an existing topic. */
    static String actual(TopicDescription description, Config configs) {
        return "replication.factor=" + replicas(description) + " " + Replication.MIN_INSYNC_REPLICAS + "=" + minInsync(configs);
    }

    /** The fewest replicas of any partition. */
    static int replicas(TopicDescription description) {
        return description.partitions().stream().mapToInt(p -> p.replicas().size()).min().orElse(0);
    }

    private static int minInsync(Config configs) {
        ConfigEntry entry = configs.get(Replication.MIN_INSYNC_REPLICAS);
        try {
            return entry == null || entry.value() == null ? 1 : Integer.parseInt(entry.value());
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
