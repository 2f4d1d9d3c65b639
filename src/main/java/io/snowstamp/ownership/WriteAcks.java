package io.snowstamp.ownership;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;

/**
 * Tells each task which of its state writes the changelog acknowledged: the producer Kafka Streams writes the changelog
 * with asks {@link #onSend} for every record it sends, and runs what it gets back when the broker answers. One per
 * stamper instance, for one changelog (snowflake mode's worker state, or sequence mode's segments). Thread-safe.
 *
 * <p>An acknowledgement counts only for the task registered when its record was sent: a task that starts again (after a
 * rebalance, or an aborted transaction under exactly-once, which closes its tasks) registers a new {@link Listener} and
 * trusts only its own writes.
 */
public final class WriteAcks {
    /** One task's reading of its own writes. */
    @FunctionalInterface
    public interface Listener {
        /**
         * Stream thread, at the send of one of the task's changelog records: what to run (on the producer's I/O thread)
         * with the record's offset when the broker acknowledges it, or null for nothing.
         */
        LongConsumer onSend(byte[] key, byte[] value);
    }

    private final String changelogTopic;
    private final boolean immediate;
    private final Map<Integer, Listener> tasks = new ConcurrentHashMap<>();

    private WriteAcks(String changelogTopic, boolean immediate) {
        this.changelogTopic = changelogTopic;
        this.immediate = immediate;
    }

    /** Acknowledgements of the writes to {@code changelogTopic}, from the producer's answers. */
    public static WriteAcks of(String changelogTopic) {
        return new WriteAcks(changelogTopic, false);
    }

    /**
     * Every write acknowledged as it is made: under exactly-once, where a state write is in the same transaction as the
     * output it covers, and for TopologyTestDriver, which has no broker to answer (a store put is all there is of a write
     * there). The tasks acknowledge their own writes as they make them.
     */
    public static WriteAcks immediate() {
        return new WriteAcks(null, true);
    }

    public boolean isImmediate() {
        return immediate;
    }

    /** From now on the acknowledgements of the writes to {@code partition} go to {@code listener}. */
    public void register(int partition, Listener listener) {
        tasks.put(partition, listener);
    }

    /** The task closes: later acknowledgements are no longer {@code listener}'s. */
    public void unregister(int partition, Listener listener) {
        tasks.remove(partition, listener);
    }

    /**
     * Producer, at the send of a record to {@code topic}/{@code partition}: what to run with its offset when the broker
     * acknowledges it (null: nothing, not a changelog write of a registered task).
     */
    public LongConsumer onSend(String topic, Integer partition, byte[] key, byte[] value) {
        if (partition == null || value == null || !topic.equals(changelogTopic)) {
            return null;
        }
        Listener listener = tasks.get(partition);
        return listener == null ? null : listener.onSend(key, value);
    }
}
