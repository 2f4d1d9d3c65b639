package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import org.apache.kafka.clients.admin.Admin;

import java.time.Duration;
import java.util.Map;

/**
 * The replication snowstamp gives every topic it creates (the topics of {@code topics apply}, the
 * worker-state changelog that {@code recover} and {@code changelog import} create, and, through
 * Kafka Streams' {@code replication.factor} and {@code topic.min.insync.replicas}, the changelog
 * Kafka Streams creates): as many replicas as the cluster can give, up to three, and
 * {@code min.insync.replicas=2} once there are three, so that every write acknowledged with
 * {@code acks=all} (all of snowstamp's producers) is on two brokers and one broker may fail without
 * stopping writes. Below three replicas {@code min.insync.replicas=1}: with two replicas a minimum
 * of two would stop every write while one broker is down. Beside {@link ChangelogWriter} because
 * the offline tools create changelogs too; immutable.
 *
 * @param factor            the replication factor, 1..32
 * @param minInsyncReplicas {@code min.insync.replicas} for that factor
 * @param brokers           the brokers the cluster had when asked; 0 when the factor was not chosen from them
 */
public record Replication(short factor, int minInsyncReplicas, int brokers) {
    /** The most replicas snowstamp asks for: three survive one broker failure with {@code min.insync.replicas=2}. */
    public static final short MOST = 3;
    /** The topic config this class sets. */
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

    public Replication {
        if (factor < 1 || minInsyncReplicas < 1 || minInsyncReplicas > factor) {
            throw new IllegalArgumentException("replication factor " + factor + " with min.insync.replicas " + minInsyncReplicas);
        }
    }

    /** The choice for a cluster of {@code brokers} live brokers: {@code min(3, brokers)} replicas. */
    public static Replication forBrokers(int brokers) {
        if (brokers < 1) {
            throw new SnowstampException("the cluster lists no broker: cannot choose a replication factor");
        }
        short factor = (short) Math.min(MOST, brokers);
        return new Replication(factor, minInsyncFor(factor), brokers);
    }

    /** A factor chosen elsewhere (a topic file, {@code kafka.replication.factor}) with the minimum that goes with it. */
    public static Replication forFactor(short factor) {
        return new Replication(factor, minInsyncFor(factor), 0);
    }

    /** 2 from three replicas on, else 1. */
    public static int minInsyncFor(int factor) {
        return factor >= MOST ? 2 : 1;
    }

    /** The choice for the cluster {@code admin} talks to (the live brokers of {@code describeCluster}). */
    public static Replication of(Admin admin, Duration timeout) {
        return forBrokers(ChangelogWriter.get(admin.describeCluster().nodes(), timeout, "list the brokers of the cluster").size());
    }

    /** {@code min.insync.replicas} as a topic config. */
    public Map<String, String> topicConfigs() {
        return Map.of(MIN_INSYNC_REPLICAS, Integer.toString(minInsyncReplicas));
    }

    /**
     * What was chosen, for one line of output: {@code replication.factor=3 min.insync.replicas=2 (auto: 3 of 5 brokers)};
     * without the parenthesis when the factor was not chosen from the brokers.
     */
    public String describe() {
        String chosen = "replication.factor=" + factor + " " + MIN_INSYNC_REPLICAS + "=" + minInsyncReplicas;
        return brokers == 0 ? chosen : chosen + " (" + why() + ")";
    }

    /** {@code auto: 3 of 5 brokers}, {@code auto: 1 broker}; empty when the factor was not chosen from the brokers. */
    public String why() {
        return brokers == 0 ? "" : "auto: " + (brokers == factor ? "" : factor + " of ") + brokers + " broker" + (brokers == 1 ? "" : "s");
    }
}
