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
     * How long an exactly-once transaction may stay open before the broker aborts it. A dead or frozen
     * instance's open transaction does not hold readers back for this long: the instance that takes its
     * partitions fences it at once ({@link TransactionFence}). What it bounds is a live instance's
     * transaction, and an abort there is costly: the stream thread is fenced, every task of the
     * thread rejoins, restores and waits for its lease again. So the transaction must outlive what a
     * live instance rides through without losing its partitions: a frozen or killed broker (the
     * controller fences it after {@code broker.session.timeout.ms}, 9 s, then elects new leaders and
     * coordinators, which the clients find within a {@link #REQUEST_TIMEOUT_MS} or two), a task
     * waiting for its lease while a changelog leader moves, a starved machine starting hundreds of
     * tasks in one transaction. With 5 s (shipped before) a frozen leader cost 21-32 s of output on
     * a three-node cluster instead of about 10 (ClusterFaultIT, benchmarks.md).
     */
    static final int TRANSACTION_TIMEOUT_MS = 20000;
    /**
     * How long a client waits for one answer before it drops the connection and asks another broker
     * where the leader or coordinator is now. A frozen broker (SIGSTOP, a long GC or I/O stall, a
     * half-dead host) still accepts TCP connections, so with Kafka's 30 s every request sent to it
     * (produce, fetch, the transaction's own requests, the lease's reads) waits out the whole freeze,
     * long after the controller has moved its partitions elsewhere (9 s). 3 s finds the new leader
     * within about one more timeout of the election. A request that times out is retried (produce:
     * idempotent, in order; transactions and offset commits: retried by the clients), so a short
     * timeout costs a retry when a broker is slow, never a record.
     */
    static final int REQUEST_TIMEOUT_MS = 3000;

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
            // a fetch the broker holds open for new data keeps the next one, which adds the partitions of tasks that
            // just started, from starting: Kafka's 500 ms delayed a takeover's first records by as much (an idle
            // instance sends a fetch per broker every 100 ms instead of 500)
            "fetch.max.wait.ms", "100",
            // failover in seconds (classic group protocol, which Kafka Streams 4.3 uses by default): a dead
            // instance's partitions move after 6 s without a heartbeat instead of 45 s. 6 s is the smallest
            // session a stock broker accepts (group.min.session.timeout.ms); heartbeats at a quarter of it
            "session.timeout.ms", String.valueOf(SESSION_TIMEOUT_MS),
            "heartbeat.interval.ms", "1500");

    /** Kafka's default {@code buffer.memory}: what one producer may hold in unsent and unacknowledged batches. */
    static final long KAFKA_BUFFER_MEMORY = 32L << 20;
    static final long MAX_BUFFER_MEMORY = 64L << 20;
    static final int MIN_BATCH_SIZE = 4 << 10;
    static final int MAX_BATCH_SIZE = 256 << 10;
    private static final int KAFKA_BATCH_SIZE = 16 << 10;

    private static final String METRICS_PUSH = "enable.metrics.push";
    private static final String GLOBAL_HANDLER = "processing.exception.handler.global.enabled";

    /** {@code profile=throughput}: fewer, larger transactions; end-to-end latency grows to about the interval. */
    static final String THROUGHPUT_COMMIT_INTERVAL_MS = "1000";

    private Tuning() {
    }

    static void apply(Properties props, ConnectionSettings connection) {
        requestTimeout(props, connection);
        noMetricsPush(props, connection);
        PRODUCER.forEach((key, value) -> setUnlessGiven(props, connection, "producer.", key, value));
        CONSUMER.forEach((key, value) -> setUnlessGiven(props, connection, "consumer.", key, value));
        // the dead-letter handler applies to global state too (the stamper has none): without this Kafka Streams 4.3 logs a
        // WARN that it will do so by default from 5.0, at every start
        props.putIfAbsent(GLOBAL_HANDLER, "true");
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

    /**
     * The producer's batches sized to the partitions it writes: its output partitions and as many of the worker-state
     * changelog. WHY: a producer takes a whole {@code batch.size} from its {@code buffer.memory} for every partition with
     * a batch open, however small the records, and the thread that sends blocks while none is free. 256 KiB batches
     * (throughput at a few partitions) left room for 128 open batches in Kafka's 32 MiB: at 1,024 busy partitions the
     * stream thread spent seconds of a start waiting for buffer (benchmarks.md, "1,024 busy partitions"). Room for two
     * batches a partition: the memory grows from 32 to at most 64 MiB (16 KiB batches, Kafka's own, at 1,024 partitions),
     * then the batches shrink, to no less than 4 KiB. A few partitions keep 256 KiB. {@code kafka.batch.size} and
     * {@code kafka.buffer.memory} (plain or {@code producer.}) win, each on its own.
     *
     * @param outputPartitions the partitions of the output topic (as many input and changelog partitions)
     */
    static void sizeBatches(Properties props, ConnectionSettings connection, int outputPartitions) {
        long written = 2L * Math.max(1, outputPartitions);
        long memory = Math.max(KAFKA_BUFFER_MEMORY, Math.min(MAX_BUFFER_MEMORY, written * 2 * KAFKA_BATCH_SIZE));
        long batch = Math.max(MIN_BATCH_SIZE, Math.min(MAX_BATCH_SIZE, memory / (2 * written)));
        if (memory != KAFKA_BUFFER_MEMORY) {
            setUnlessGiven(props, connection, "producer.", "buffer.memory", String.valueOf(memory));
        }
        setUnlessGiven(props, connection, "producer.", "batch.size", String.valueOf(batch));
    }

    /**
     * No client telemetry (KIP-714) unless {@code kafka.enable.metrics.push} is given. Telemetry reaches only a
     * broker that has a client-metrics subscription, yet with it on every metric a client registers is also
     * handed to its telemetry reporter, which names it with regular expressions; Kafka Streams hands its own
     * metrics (per task, per processor) to the main consumer's reporter too. A takeover creates thousands,
     * in the stream thread, before the tasks' restores and leases (benchmarks.md, "Sixth pass").
     */
    static void noMetricsPush(Properties props, ConnectionSettings connection) {
        if (!connection.kafka().containsKey(METRICS_PUSH)) {
            props.put(METRICS_PUSH, "false");
        }
    }

    /**
     * {@link #REQUEST_TIMEOUT_MS} for every client made from {@code props} (Kafka Streams passes an
     * unprefixed key to its producer, consumers and admin client alike; the lease's own clients get it
     * here too), unless {@code kafka.request.timeout.ms} is given.
     */
    static void requestTimeout(Properties props, ConnectionSettings connection) {
        if (!connection.kafka().containsKey("request.timeout.ms")) {
            props.put("request.timeout.ms", String.valueOf(REQUEST_TIMEOUT_MS));
        }
    }

    private static void setUnlessGiven(Properties props, ConnectionSettings connection, String prefix, String key, String value) {
        Map<String, String> given = connection.kafka();
        if (!given.containsKey(key) && !given.containsKey(prefix + key) && !given.containsKey("main." + prefix + key)) {
            props.put(prefix + key, value);
        }
    }
}
