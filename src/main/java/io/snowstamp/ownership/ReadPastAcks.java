package io.snowstamp.ownership;

import io.snowstamp.lease.LeaseGuard;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The reservations of one task (or of one tag of a sequence task) that cover values now: a reservation counts once the
 * changelog acknowledged it ({@code acks=all}) <em>and</em> a lease round that confirmed the task's lease read the
 * changelog past the reservation's offset ({@link LeaseGuard#readEnd}). The second half is what makes a new owner see it
 * without any clock: that round found no newer lease up to beyond the reservation, so every newer lease record comes
 * after the reservation in the log, and its owner, which reads its partition up to its own lease record before its first
 * value, reads the reservation. It holds even where a lease round is answered by a leader that was replaced without
 * knowing it (cut off from the controller and its followers): such a leader reports its old end, and a reservation the
 * new leader acknowledged lies at or past it (design.md, "The ownership lease").
 *
 * <p>Writes that are in the log before any newer lease by construction count at once ({@link #inLog}): a restored value,
 * and under exactly-once a write in the same transaction as the values it covers.
 *
 * <p>Thread-safety: {@link #acknowledged} runs on the producer's I/O thread; everything else on the task's stream thread.
 * The fast path ({@link #covered} with nothing pending) reads one plain field and one volatile.
 */
public final class ReadPastAcks {
    /** Acknowledged writes not read past yet, in offset order: {offset, value}. Guarded by itself. */
    private final Deque<long[]> pending = new ArrayDeque<>();
    private volatile boolean anyPending;
    // stream thread
    private long covered = -1;

    /** Producer I/O thread: the write naming {@code value} was acknowledged at changelog offset {@code offset}. */
    public void acknowledged(long value, long offset) {
        synchronized (pending) {
            pending.addLast(new long[] {offset, value});
            anyPending = true;
        }
    }

    /** Stream thread: {@code value} is in the log ahead of any newer lease already (restored, or written in this transaction). */
    public void inLog(long value) {
        covered = Math.max(covered, value);
    }

    /** Stream thread: whether {@code value} is covered now under {@code lease}. One plain read when it is covered already. */
    public boolean covers(long value, LeaseGuard lease) {
        return value <= covered || value <= covered(lease);
    }

    /**
     * Stream thread: the highest value covered now under {@code lease} (-1: none): acknowledged writes a round confirming
     * it has read past count from here on.
     */
    public long covered(LeaseGuard lease) {
        if (anyPending) {
            long end = lease.readEnd();
            synchronized (pending) {
                while (!pending.isEmpty() && pending.peekFirst()[0] < end) {
                    covered = Math.max(covered, pending.pollFirst()[1]);
                }
                anyPending = !pending.isEmpty();
            }
        }
        return covered;
    }

    /**
     * Stream thread: returns once {@code value} is covered, hurrying the lease's verifier while it waits
     * (bounded: {@link AckWait}).
     *
     * @return nanoseconds waited
     * @throws org.apache.kafka.streams.errors.TaskMigratedException when it is not covered in time, or the lease is lost
     *                                                               meanwhile: the value is dropped
     */
    public long await(long value, LeaseGuard lease, String name, String reservation, String what) {
        if (covers(value, lease)) {
            return 0;
        }
        return AckWait.await(() -> {
            long now = covered(lease);
            if (now < value) {
                if (lease.lost()) {
                    lease.checkIssued();    // a round read past a newer lease: nothing will be read past for this one, drop it now
                }
                lease.hurry();
            }
            return now;
        }, value, lease.ticker(), name, reservation, what);
    }
}
