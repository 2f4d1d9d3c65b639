package io.snowstamp.runtime;

import io.snowstamp.stream.Names;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Times Kafka Streams' restores of the {@code worker-state} store from its changelog, by partition.
 * Called by stream threads; read from any thread.
 */
public final class RestoreTracker implements StateRestoreListener {
    private final Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
    private final Map<Integer, Restore> finished = new ConcurrentHashMap<>();

    /**
     * The last completed restore of one partition.
     *
     * @param records changelog records restored
     * @param millis  how long the restore took
     */
    public record Restore(long records, long millis) {
    }

    @Override
    public void onRestoreStart(TopicPartition changelog, String store, long startingOffset, long endingOffset) {
        if (Names.STORE.equals(store)) {
            startedAt.put(changelog.partition(), System.nanoTime());
        }
    }

    @Override
    public void onBatchRestored(TopicPartition changelog, String store, long batchEndOffset, long numRestored) {
        // only the totals matter
    }

    @Override
    public void onRestoreEnd(TopicPartition changelog, String store, long totalRestored) {
        Long started = Names.STORE.equals(store) ? startedAt.remove(changelog.partition()) : null;
        if (started != null) {
            finished.put(changelog.partition(), new Restore(totalRestored, (System.nanoTime() - started) / 1_000_000));
        }
    }

    @Override
    public void onRestoreSuspended(TopicPartition changelog, String store, long totalRestored) {
        if (Names.STORE.equals(store)) {
            startedAt.remove(changelog.partition());
        }
    }

    /** The last completed restore by partition (the changelog partition is the input partition). */
    public Map<Integer, Restore> completed() {
        return new TreeMap<>(finished);
    }
}
