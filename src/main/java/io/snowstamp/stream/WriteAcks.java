package io.snowstamp.stream;

import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tells each task which of its worker-state writes the changelog acknowledged: the producer Kafka Streams writes the
 * changelog with asks {@link #onSend} for every record it sends, and runs what it gets back when the broker answers.
 * One per stamper instance. Thread-safe.
 *
 * <p>An acknowledgement counts only for the task registered when its record was sent: a task that starts again (after a
 * rebalance, or an aborted transaction under exactly-once, which closes its tasks) gets a new {@link WriteAhead} and
 * trusts only its own writes.
 */
public final class WriteAcks {
    private static final WorkerStateSerde STATES = new WorkerStateSerde();

    private final String changelogTopic;
    private final boolean immediate;
    private final Map<Integer, WriteAhead> tasks = new ConcurrentHashMap<>();

    private WriteAcks(String changelogTopic, boolean immediate) {
        this.changelogTopic = changelogTopic;
        this.immediate = immediate;
    }

    /** Acknowledgements of the writes to {@code changelogTopic}, from the producer's answers. */
    public static WriteAcks of(String changelogTopic) {
        return new WriteAcks(changelogTopic, false);
    }

    /**
     * Every write acknowledged as it is made: for TopologyTestDriver, which has no broker to answer (a store put is all
     * there is of a write there).
     */
    public static WriteAcks immediate() {
        return new WriteAcks(null, true);
    }

    boolean isImmediate() {
        return immediate;
    }

    void register(int partition, WriteAhead ahead) {
        tasks.put(partition, ahead);
    }

    void unregister(int partition, WriteAhead ahead) {
        tasks.remove(partition, ahead);
    }

    /**
     * Producer, at the send of a record to {@code topic}/{@code partition}: what to run when the broker acknowledges it
     * (null: nothing, not a worker-state write of a registered task).
     */
    public Runnable onSend(String topic, Integer partition, byte[] value) {
        if (partition == null || value == null || !topic.equals(changelogTopic)) {
            return null;
        }
        WriteAhead ahead = tasks.get(partition);
        if (ahead == null) {
            return null;
        }
        WorkerState state = STATES.deserialize(topic, value);
        long reservedUntil = state.reservedUntil();
        return () -> ahead.acknowledged(reservedUntil);
    }
}
