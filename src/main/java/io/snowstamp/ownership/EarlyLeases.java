package io.snowstamp.ownership;

import io.snowstamp.lease.Holders;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.Leases;
import io.snowstamp.state.WorkerState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;
import java.util.function.LongSupplier;

/**
 * Takes a task's new lease as soon as Kafka Streams has restored the task's worker state (on the thread
 * that restored it), and hands the lease to the task's {@link StampProcessor#init} when the stream thread
 * gets there.
 *
 * <p>WHY: a new lease lets its task issue only once the previous owner's term has run out, about 1.5 s after
 * its record was read back ({@code LeaseVerifier}). Taken in {@code init}, that wait begins only at the task's
 * turn on the stream thread, which starts the restored tasks one after another: when one instance took over
 * 512 partitions, all were restored 1.5 s after the assignment, the last one started 2.6 s after that, and
 * every term began at its task's start (benchmarks.md, "1,024 partitions with the lease"). Taken when the
 * restore ends, the terms run while the stream thread works through the starts.
 *
 * <p>The same lease and the same argument ({@code PartitionLease}): the record is what {@code init} would
 * write (the restored state with the next epoch, held by the stream thread that runs the task: its stores
 * are opened on that thread, {@link #opened}), taken after the same restore, whose end is the point after
 * which another writer's record sends the task back to restore. {@code init} adopts it only if it finds
 * exactly the state the lease was computed from and runs on the thread the lease names; otherwise the early
 * lease is released and {@code init} takes one as before. A lease never adopted (the task closed or became a
 * standby first) is released when its store lets go of the task. Where nothing was restored (a first start)
 * or the layout changed, no lease is taken early: {@code init} decides.
 *
 * <p>Thread-safe: {@link #opened}, {@link #adopt} and {@link #closed} run on a stream thread, {@link #restored}
 * on a state updater thread.
 */
public final class EarlyLeases {
    private static final Logger log = LoggerFactory.getLogger(EarlyLeases.class);

    /** A task's store, opened on the stream thread that will run the task. */
    private record Opened(Object store, TaskId task, IntFunction<WorkerState> reader, String holder) {
    }

    /** A lease taken at restore end: the state it was computed from, the state its record holds, its guard. */
    public record Taken(Opened opened, WorkerState restored, WorkerState state, LeaseGuard guard) {
    }

    /** What happened to the leases taken early (tests, logs). */
    public record Stats(long taken, long adopted, long dropped) {
    }

    private final Leases leases;
    private final String changelogTopic;
    private final String instanceId;
    private final String fingerprint;
    private final IntToLongFunction workerFor;
    private final LongSupplier clock;
    private final Map<Integer, Opened> stores = new ConcurrentHashMap<>();
    private final Map<Integer, Taken> taken = new ConcurrentHashMap<>();
    private final AtomicLong takenCount = new AtomicLong();
    private final AtomicLong adoptedCount = new AtomicLong();
    private final AtomicLong droppedCount = new AtomicLong();

    /**
     * @param changelogTopic the worker-state changelog (the lease's partition is the task's)
     * @param instanceId     {@code instance.id}: the holder a lease names is {@code instance-id#nonce/stream-thread}
     * @param fingerprint    the layout's fingerprint: a restored state of another layout gets no early lease
     * @param workerFor      partition -> worker ID (log lines)
     * @param clock          wall clock in Unix millis, as the processor's
     */
    public EarlyLeases(Leases leases, String changelogTopic, String instanceId, String fingerprint, IntToLongFunction workerFor,
                       LongSupplier clock) {
        this.leases = leases;
        this.changelogTopic = changelogTopic;
        this.instanceId = instanceId;
        this.fingerprint = fingerprint;
        this.workerFor = workerFor;
        this.clock = clock;
    }

    /**
     * Stream thread: the worker-state store of {@code task} opens, before its restore, on the thread that runs the task.
     *
     * @param store  the store instance (to tell its close from another task's of the same partition)
     * @param reader reads the partition's state from the store (after the restore, on the restoring thread)
     */
    public void opened(int partition, Object store, TaskId task, IntFunction<WorkerState> reader) {
        stores.put(partition, new Opened(store, task, reader, holder(instanceId)));
    }

    /** Who holds a lease the calling stream thread takes: {@code instance-id#nonce/stream-thread} ({@link Holders}). */
    public static String holder(String instanceId) {
        return Holders.of(instanceId);
    }

    /** The highest epoch this instance has read in {@code partition}'s changelog (-1: none): a new lease goes above it. */
    public long highestEpoch(int partition) {
        return leases.highestEpoch(new TopicPartition(changelogTopic, partition));
    }

    /**
     * Sends {@code state}, a restored state with its new lease, as the task's lease record (at restore end here, or at the
     * task's start in {@link StampProcessor#init}): the state is what the changelog's next restore reads.
     */
    public static LeaseGuard take(Leases leases, TaskId task, String changelogTopic, int partition, WorkerState state, String name) {
        return leases.take(task, new TopicPartition(changelogTopic, partition), new LeaseMark(state.epoch(), state.holder()),
                PreCommitStore.keyBytes(partition), PreCommitStore.stateBytes(state), name, true);
    }

    /**
     * State updater: the restore of {@code partition}'s worker state has ended; takes the task's lease now. Never
     * throws (Kafka Streams would stop the thread): whatever goes wrong leaves the lease to the task's start.
     */
    public void restored(int partition) {
        Opened opened = stores.get(partition);
        if (opened == null) {
            return;
        }
        try {
            WorkerState stored = opened.reader().apply(partition);
            if (stored == null || !stored.layoutFingerprint().equals(fingerprint)) {
                return;     // a first start, or another layout: init decides (an initial state, or a refusal)
            }
            long now = clock.getAsLong();
            WorkerState state = stored.withNewLease(opened.holder(), now, highestEpoch(partition)).withWrittenAt(now);
            LeaseGuard guard = take(leases, opened.task(), changelogTopic, partition, state,
                    "partition " + partition + " worker " + workerFor.applyAsLong(partition));
            takenCount.incrementAndGet();
            Taken mine = new Taken(opened, stored, state, guard);
            Taken previous = taken.put(partition, mine);
            if (previous != null) {
                drop(previous);
            }
            if (stores.get(partition) != opened && taken.remove(partition, mine)) {
                drop(mine);     // the store let go of its task meanwhile: nobody will adopt this lease
            }
        } catch (RuntimeException e) {
            log.warn("partition {}: the lease could not be taken when the restore ended ({}); the task's start takes it",
                    partition, e.getMessage());
        }
    }

    /** The lease a snowflake task starts under: its state with the lease, the guard, and whether it was taken early. */
    public record TaskLease(WorkerState state, LeaseGuard guard, boolean early) {
    }

    /**
     * Stream thread, in the task's {@code init}: the lease taken when its restore ended, from this very state (its wait has
     * been running since), or else a new one, above every epoch seen, taken now straight to the changelog: the previous
     * owner reads it there and stops, and the first ID here waits until its last term has run out ({@code LeaseVerifier}).
     *
     * @param early where leases may have been taken early (null: none)
     */
    public static TaskLease start(EarlyLeases early, Leases leases, TaskId task, String changelogTopic, WorkerState restored,
                                  String holder, LongSupplier clock, String name) {
        int partition = task.partition();
        Taken taken = early == null ? null : early.adopt(partition, restored, holder);
        if (taken != null) {
            return new TaskLease(taken.state(), taken.guard(), true);
        }
        long highestEpoch = early == null ? -1 : early.highestEpoch(partition);
        WorkerState state = restored.withNewLease(holder, clock.getAsLong(), highestEpoch).withWrittenAt(clock.getAsLong());
        return new TaskLease(state, take(leases, task, changelogTopic, partition, state, name), false);
    }

    /**
     * Stream thread, in the task's {@code init}: the lease taken at the end of its restore, if it was computed from
     * exactly {@code restored} and names {@code holder}; else null (and an early lease there was is released).
     */
    public Taken adopt(int partition, WorkerState restored, String holder) {
        Taken early = taken.remove(partition);
        if (early == null) {
            return null;
        }
        if (!early.restored().equals(restored) || !early.state().holder().equals(holder)) {
            log.debug("partition {}: the lease taken at restore end ({}) does not fit the task's start; taking another",
                    partition, early.state().epoch());
            drop(early);
            return null;
        }
        adoptedCount.incrementAndGet();
        return early;
    }

    /** Stream thread: {@code store} lets go of its task (closed, or recycled into a standby); an unadopted lease goes. */
    public void closed(int partition, Object store) {
        stores.computeIfPresent(partition, (p, opened) -> opened.store() == store ? null : opened);
        Taken[] left = new Taken[1];
        taken.computeIfPresent(partition, (p, early) -> {
            if (early.opened().store() != store) {
                return early;
            }
            left[0] = early;
            return null;
        });
        if (left[0] != null) {
            drop(left[0]);
        }
    }

    private void drop(Taken early) {
        early.guard().release();
        droppedCount.incrementAndGet();
    }

    public Stats stats() {
        return new Stats(takenCount.get(), adoptedCount.get(), droppedCount.get());
    }
}
