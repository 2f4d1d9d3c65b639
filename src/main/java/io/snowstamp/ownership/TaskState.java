package io.snowstamp.ownership;


import io.snowstamp.config.ConfigException;
import io.snowstamp.config.IdSettings;
import io.snowstamp.config.Keys;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.function.LongSupplier;

/**
 * One task's worker state: the record it keeps in the {@code worker-state} store (and so in the changelog), and every
 * write of it — the lease at the task's start, the write-ahead reservations, the exact last ID before a commit that needs it, the
 * heartbeat. Each write carries the writer's wall clock ({@link WorkerState#writtenAt()}). Nothing is written once the
 * task's lease is lost or its term ran out ({@link LeaseGuard#mayWrite}): a zombie's write landing after a newer lease
 * would become the partition's newest value. Used by the task's stream thread.
 */
public final class TaskState {
    private static final WorkerStateSerde STATES = new WorkerStateSerde();
    private final KeyValueStore<Integer, WorkerState> store;
    private final int partition;
    private final LongSupplier clock;
    private final WriteAcks acks;
    private WorkerState state;
    private LeaseGuard lease = LeaseGuard.none();
    private WriteAhead ahead;
    private WriteAcks.Listener listener;

    public TaskState(KeyValueStore<Integer, WorkerState> store, int partition, LongSupplier clock, WriteAcks acks) {
        this.store = store;
        this.partition = partition;
        this.clock = clock;
        this.acks = acks;
    }

    /**
     * The state restored for the partition (an initial one where none is), refused when it was written with another
     * layout or worker: the IDs of the two could overlap.
     */
    public WorkerState restored(IdSettings ids, long worker) {
        String fingerprint = ids.layout().fingerprint();
        WorkerState stored = store.get(partition);
        if (stored == null) {
            return WorkerState.initial(fingerprint, worker);
        }
        if (!stored.layoutFingerprint().equals(fingerprint)) {
            throw new LayoutChangedException(partition, stored.layoutFingerprint(), fingerprint);
        }
        if (stored.workerId() != worker) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, ids.workerOffset(), "the offset the state of partition "
                    + partition + " was written with (worker " + stored.workerId() + ", now " + worker
                    + "): a changed worker ID could repeat another partition's IDs");
        }
        return stored;
    }

    /**
     * The task's new lease: {@code leased} (its record already sent by the lease) goes to the store, whose put reaches the
     * changelog at once (it does not cache) in the thread's open transaction — after the lease's own record, so that
     * readers of committed data are not kept from the lease until the transaction commits.
     */
    public void leased(WorkerState leased, LeaseGuard guard) {
        state = leased;
        lease = guard;
        store.put(partition, state);
    }

    /** From now on the broker's acknowledgements of this state's writes go to {@code ahead}. */
    public void issuing(WriteAhead writeAhead) {
        ahead = writeAhead;
        listener = (key, value) -> {
            long reservedUntil = STATES.deserialize(null, value).reservedUntil();
            return offset -> writeAhead.acknowledged(reservedUntil, offset);
        };
        acks.register(partition, listener);
    }

    public WorkerState state() {
        return state;
    }

    /** {@link WriteAhead.Writer}: the state with a reservation up to {@code until}; false once the lease lapsed. */
    public boolean reserve(long until, long lastIssued) {
        if (!lease.mayWrite()) {
            return false;
        }
        write(state.withLastId(Math.max(state.lastId(), lastIssued)).withReservedUntil(Math.max(until, state.reservedUntil())));
        return true;
    }

    public void heartbeat(long lastIssued) {
        if (lease.mayWrite()) {
            write(state.withHeartbeat(clock.getAsLong()).withLastId(Math.max(state.lastId(), lastIssued)));
        }
    }

    /** Right before a commit: the state names the last ID issued (nothing when it does already). */
    public void recordLastId(long lastIssued) {
        if (lastIssued > state.lastId() && lease.mayWrite()) {
            write(state.withLastId(lastIssued));
        }
    }

    /** The task closes: later acknowledgements are no longer this task's. */
    public void close() {
        if (listener != null) {
            acks.unregister(partition, listener);
        }
    }

    private void write(WorkerState next) {
        state = next.withWrittenAt(clock.getAsLong());
        store.put(partition, state);
        if (acks.isImmediate()) {
            ahead.inLog(state.reservedUntil());
        }
    }
}
