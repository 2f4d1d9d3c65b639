package io.snowstamp.runtime;

import io.snowstamp.config.ConnectionSettings;

import java.util.Map;
import java.util.Properties;

/**
 * The Kafka settings snowstamp ships, on top of Kafka Streams' defaults. A stamper moves small
 * records one to one, so throughput is bounded by request count, not CPU: larger batches and
 * larger polls cost nothing in safety (still exactly-once, still a 100 ms commit interval) and
 * little in latency. Any of these set through {@code kafka.*} (plain or with a
 * {@code producer.}/{@code consumer.} prefix) wins.
 */
final class Tuning {
    /** The shipped session timeout of the classic group protocol (the README's failure table depends on it). */
    static final int SESSION_TIMEOUT_MS = 6000;
    /**
     * Under exactly-once, a dead instance's open transaction holds back its partitions' committed
     * offsets (and read_committed readers) until the broker aborts it, transaction.timeout.ms after it
     * began. Kafka Streams' 10 s would alone exceed the failover goal; 5 s ends before the 6 s session.
     */
    static final int TRANSACTION_TIMEOUT_MS = 5000;

    /** key -> value, applied to the producer or the main consumer through the Streams prefixes. */
    private static final Map<String, String> PRODUCER = Map.of(
            // records of one commit interval leave in a few large batches instead of many small ones
            "linger.ms", "5",
            "batch.size", "262144",
            // lz4 costs little CPU and halves the bytes of JSON records on the wire and on disk
            "compression.type", "lz4");
    private static final Map<String, String> CONSUMER = Map.of(
            // one poll feeds a whole commit interval's worth of records to the task. No fetch.min.bytes:
            // making the broker wait for 64 KiB added ~20 ms to p50 latency at 20,000 records/s
            // (bench) and no measurable throughput
            "max.poll.records", "5000",
            "max.partition.fetch.bytes", "4194304",
            // failover in seconds (classic group protocol, which Kafka Streams 4.3 uses by default): a dead
            // instance's partitions move after 6 s without a heartbeat instead of 45 s. 6 s is the smallest
            // session a stock broker accepts (group.min.session.timeout.ms); heartbeats at a quarter of it
            "session.timeout.ms", String.valueOf(SESSION_TIMEOUT_MS),
            "heartbeat.interval.ms", "1500");

    /** {@code profile=throughput}: fewer, larger transactions; end-to-end latency grows to about the interval. */
    static final String THROUGHPUT_COMMIT_INTERVAL_MS = "1000";

    private Tuning() {
    }

    static void apply(Properties props, ConnectionSettings connection) {
        PRODUCER.forEach((key, value) -> setUnlessGiven(props, connection, "producer.", key, value));
        CONSUMER.forEach((key, value) -> setUnlessGiven(props, connection, "consumer.", key, value));
        if (connection.profile() == ConnectionSettings.Profile.THROUGHPUT) {
            props.putIfAbsent("commit.interval.ms", THROUGHPUT_COMMIT_INTERVAL_MS);
        }
        if (connection.processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2) {
            // Kafka Streams refuses a transaction timeout below the commit interval: keep twice the interval
            Object interval = props.get("commit.interval.ms");
            long commitMillis = interval == null ? 100 : Long.parseLong(interval.toString().trim());
            setUnlessGiven(props, connection, "producer.", "transaction.timeout.ms",
                    String.valueOf(Math.max(TRANSACTION_TIMEOUT_MS, 2 * commitMillis)));
        }
    }

    private static void setUnlessGiven(Properties props, ConnectionSettings connection, String prefix, String key, String value) {
        Map<String, String> given = connection.kafka();
        if (!given.containsKey(key) && !given.containsKey(prefix + key) && !given.containsKey("main." + prefix + key)) {
            props.put(prefix + key, value);
        }
    }
}
