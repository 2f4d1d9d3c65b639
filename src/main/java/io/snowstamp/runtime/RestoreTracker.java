package io.snowstamp.runtime;

import io.snowstamp.lease.LeaseVerifier;
import io.snowstamp.resume.TailPrefetch;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.ownership.EarlyLeases;
import io.snowstamp.stream.Names;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Times Kafka Streams' restores of the {@code worker-state} store from its changelog, by partition,
 * and tells the {@link TailPrefetch} which tasks are about to start (see there why these calls are
 * what makes a prefetched tail safe). Under exactly-once every restore start of a task's store first
 * fences a previous owner's open transaction on the task's changelog and output partitions
 * ({@link TransactionFence#fenceHoldersOf}: Kafka Streams' fetch of the committed offset would otherwise wait for the
 * broker to abort it); not the global tags table's restore ({@link #startsATask}).
 * Called by the state updater threads; read from any thread.
 */
public final class RestoreTracker implements StateRestoreListener {
    private final Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
    private final Map<Integer, Restore> finished = new ConcurrentHashMap<>();
    private volatile TailPrefetch prefetch;
    private volatile LeaseVerifier leases;
    private volatile TransactionFence fence;
    private volatile EarlyLeases early;

    /**
     * The last completed restore of one partition.
     *
     * @param records changelog records restored
     * @param millis  how long the restore took
     */
    public record Restore(long records, long millis) {
    }

    /** From now on, restores of the worker-state store are told to {@code prefetch} too (null: no longer). */
    void feed(TailPrefetch prefetch) {
        this.prefetch = prefetch;
    }

    /** From now on, where each restore of a store that holds leases ends is told to {@code leases} (null: no longer). */
    void feed(LeaseVerifier leases) {
        this.leases = leases;
    }

    /** From now on, every restore start of a task's store fences a previous owner's open transactions (null: no longer). */
    void feed(TransactionFence fence) {
        this.fence = fence;
    }

    /** From now on, the end of each worker-state restore takes the task's lease at once (null: no longer). */
    void feed(EarlyLeases early) {
        this.early = early;
    }

    /**
     * Whether a restore of {@code store} starts a task of this instance, whose predecessor's open transaction is fenced:
     * the stores of the stamper's tasks, not the global tags table of sequence mode, whose restore (any instance, any
     * time) names a partition of the tags topic, not a task — fencing the holders of the output partition of that number
     * aborted a live owner's transaction (SequenceFaultIT).
     */
    static boolean startsATask(String store) {
        return Names.STORE.equals(store) || Names.PENDING_STORE.equals(store) || SequenceNames.STORE.equals(store);
    }

    @Override
    public void onRestoreStart(TopicPartition changelog, String store, long startingOffset, long endingOffset) {
        TransactionFence early = fence;
        if (early != null && startsATask(store)) {
            early.fenceHoldersOf(changelog);
        }
        LeaseVerifier verifier = leases;
        if (verifier != null && (Names.STORE.equals(store) || SequenceNames.STORE.equals(store))) {
            verifier.restoreStarted(changelog, endingOffset);
        }
        if (Names.STORE.equals(store)) {
            startedAt.put(changelog.partition(), System.nanoTime());
            TailPrefetch target = prefetch;
            if (target != null) {
                target.restoreStarted(changelog.partition());
            }
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
        TailPrefetch target = prefetch;
        if (target != null && Names.STORE.equals(store)) {
            target.restoreEnded(changelog.partition());
        }
        EarlyLeases leases = early;
        if (leases != null && Names.STORE.equals(store)) {
            leases.restored(changelog.partition());
        }
    }

    @Override
    public void onRestoreSuspended(TopicPartition changelog, String store, long totalRestored) {
        if (Names.STORE.equals(store)) {
            startedAt.remove(changelog.partition());
        }
        // any store of the task (the pause buffer's too): its worker state may have restored already, the task is given up
        TailPrefetch target = prefetch;
        if (target != null) {
            target.released(changelog.partition());
        }
    }

    /** The last completed restore by partition (the changelog partition is the input partition). */
    public Map<Integer, Restore> completed() {
        return new TreeMap<>(finished);
    }
}
