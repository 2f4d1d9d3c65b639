package io.snowstamp.state;

import java.util.Objects;

/**
 * The generator state of one partition: who holds its worker ID (the lease) and how far IDs have
 * been issued (the high-water mark). Stored in the {@code worker-state} store under the partition
 * number and replicated through its compacted changelog; {@link WorkerStateSerde} documents the
 * binary format.
 *
 * @param layoutFingerprint {@code IdLayout.fingerprint()} of the layout the IDs were issued with
 * @param workerId          the worker field of every ID issued for this partition
 * @param epoch             lease generation: bumped each time a task (re)starts for the partition
 * @param holder            who holds the lease: {@code instance-id#nonce/stream-thread}
 * @param acquiredAt        wall-clock Unix millis when the current holder took the lease
 * @param heartbeatAt       wall-clock Unix millis of the holder's last heartbeat
 * @param lastId            the highest ID issued and committed with this state, or -1 if none
 * @param reservedUntil     highest ID that may have been issued without another state write, or -1
 * @param writtenAt         wall-clock Unix millis when the writer (a stamper task, an import) wrote this state;
 *                          0 = unknown (format version 1 had no such field)
 */
public record WorkerState(
        String layoutFingerprint,
        long workerId,
        long epoch,
        String holder,
        long acquiredAt,
        long heartbeatAt,
        long lastId,
        long reservedUntil,
        long writtenAt) {

    public WorkerState {
        Objects.requireNonNull(layoutFingerprint, "layoutFingerprint");
        Objects.requireNonNull(holder, "holder");
        if (workerId < 0 || epoch < 0) {
            throw new IllegalArgumentException("workerId and epoch must be >= 0, got " + workerId + ", " + epoch);
        }
    }

    /** A state without a write time (as format version 1 stored it). */
    public WorkerState(String layoutFingerprint, long workerId, long epoch, String holder, long acquiredAt, long heartbeatAt,
                       long lastId, long reservedUntil) {
        this(layoutFingerprint, workerId, epoch, holder, acquiredAt, heartbeatAt, lastId, reservedUntil, 0);
    }

    /** The state of a partition that never issued an ID. */
    public static WorkerState initial(String layoutFingerprint, long workerId) {
        return new WorkerState(layoutFingerprint, workerId, 0, "", 0, 0, -1, -1);
    }

    /** The highest ID this state proves may already exist: the max of lastId and reservedUntil. */
    public long highWaterMark() {
        return Math.max(lastId, reservedUntil);
    }

    /** A new lease generation taken by {@code newHolder} at {@code now}. */
    public WorkerState withNewLease(String newHolder, long now) {
        return new WorkerState(layoutFingerprint, workerId, epoch + 1, newHolder, now, now, lastId, reservedUntil, writtenAt);
    }

    /**
     * A new lease generation taken by {@code newHolder} at {@code now}, its epoch above both this state's and
     * {@code highestSeen} (the highest epoch read in the changelog: a stale writer's record can be the newest value).
     */
    public WorkerState withNewLease(String newHolder, long now, long highestSeen) {
        return new WorkerState(layoutFingerprint, workerId, Math.max(epoch, highestSeen) + 1, newHolder, now, now, lastId,
                reservedUntil, writtenAt);
    }

    public WorkerState withHeartbeat(long now) {
        return new WorkerState(layoutFingerprint, workerId, epoch, holder, acquiredAt, now, lastId, reservedUntil, writtenAt);
    }

    public WorkerState withLastId(long id) {
        return new WorkerState(layoutFingerprint, workerId, epoch, holder, acquiredAt, heartbeatAt, id, reservedUntil, writtenAt);
    }

    public WorkerState withReservedUntil(long id) {
        return new WorkerState(layoutFingerprint, workerId, epoch, holder, acquiredAt, heartbeatAt, lastId, id, writtenAt);
    }

    /** This state as written at {@code now} (wall-clock Unix millis of the writer). */
    public WorkerState withWrittenAt(long now) {
        return new WorkerState(layoutFingerprint, workerId, epoch, holder, acquiredAt, heartbeatAt, lastId, reservedUntil, now);
    }

    /**
     * True when {@code other} holds the same layout, worker, epoch and marks (lastId, reservedUntil):
     * writing one over the other would change nothing a resume point or a takeover depends on. The
     * lease details (holder, times) may differ.
     */
    public boolean sameMarks(WorkerState other) {
        return other != null && layoutFingerprint.equals(other.layoutFingerprint) && workerId == other.workerId
                && epoch == other.epoch && lastId == other.lastId && reservedUntil == other.reservedUntil;
    }
}
