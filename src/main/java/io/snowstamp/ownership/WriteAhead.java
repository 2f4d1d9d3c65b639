package io.snowstamp.ownership;

import io.snowstamp.id.IdLayout;
import io.snowstamp.lease.LeaseGuard;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task's write-ahead reservations: no ID above the highest <em>acknowledged</em> reservation ever leaves the task.
 * A reservation is the task's worker state naming {@code reservedUntil}, written to the changelog through Kafka Streams'
 * producer ({@code acks=all}); it covers IDs once the broker acknowledged it ({@link #acknowledged}, from
 * {@link WriteAcks}) and a round confirming the task's lease read the changelog past it ({@link ReadPastAcks}): then
 * every newer lease record comes after it in the log, and a new owner reads it before its first ID. Reservations are sent ahead of need — by the task's renewal
 * punctuation and after an ID that used half of the reservation sent — so steady stamping never waits; an ID above what
 * is acknowledged waits for it here (bounded: {@link AckWait}). Why this makes the IDs of two owners disjoint:
 * design.md, "The ownership lease".
 *
 * <p>A reservation covers {@code window} time units from the time it is written for, plus a spread of 0/16 to 15/16 of
 * the window by partition, so that tasks started together do not renew in the same commit ever after. A window of 0
 * ({@code id.reservation=0}) reserves each ID itself: every ID waits for its own write.
 *
 * <p>Thread-safety: {@link #acknowledged} runs on the producer's I/O thread; everything else on the task's stream thread.
 */
public final class WriteAhead {
    private static final Logger log = LoggerFactory.getLogger(WriteAhead.class);
    private static final int PHASES = 16;

    /** Writes the task's state with {@code reservedUntil} at least {@code until}; false when the task may not write now. */
    @FunctionalInterface
    public interface Writer {
        boolean reserve(long until);
    }

    private final IdLayout layout;
    private final long datacenter;
    private final long worker;
    private final long windowUnits;
    private final Writer writer;
    private final String name;
    private final java.util.function.LongConsumer waited;
    /** Told when {@link #awaitCovered} starts to wait (the oldest-wait gauge, which moves while a wait lasts). */
    private final Runnable waiting;
    private final LeaseGuard lease;
    private final ReadPastAcks acked = new ReadPastAcks();
    // stream thread
    private long sent = -1;
    /** The time unit up to which the reservation sent reaches (-1: none sent). */
    private long sentTime = -1;

    /**
     * @param windowUnits time units each reservation reaches ahead (0: each ID reserves itself)
     * @param partition   the task's partition (the spread of its window)
     * @param lease       the task's lease: its clock, and how far its confirming rounds have read the changelog
     * @param name        how log lines name the task
     * @param waited      told the nanoseconds of every wait for an acknowledgement (metrics)
     */
    public WriteAhead(IdLayout layout, long datacenter, long worker, long windowUnits, int partition, LeaseGuard lease,
                      Writer writer, String name, java.util.function.LongConsumer waited) {
        this(layout, datacenter, worker, windowUnits, partition, lease, writer, name, () -> { }, waited);
    }

    /** As above; {@code waiting} is told when an ID starts to wait on the thread ({@code id.reservation=0}: every ID). */
    public WriteAhead(IdLayout layout, long datacenter, long worker, long windowUnits, int partition, LeaseGuard lease,
                      Writer writer, String name, Runnable waiting, java.util.function.LongConsumer waited) {
        this.waited = waited;
        this.waiting = waiting;
        this.layout = layout;
        this.datacenter = datacenter;
        this.worker = worker;
        this.windowUnits = windowUnits + windowUnits * (partition % PHASES) / PHASES;
        this.lease = lease;
        this.writer = writer;
        this.name = name;
    }

    /** Producer I/O thread: a state naming {@code reservedUntil} was acknowledged at changelog offset {@code offset}. */
    public void acknowledged(long reservedUntil, long offset) {
        acked.acknowledged(reservedUntil, offset);
    }

    /**
     * Stream thread: a state naming {@code reservedUntil} is in the log ahead of any newer lease already: written in the
     * transaction of the IDs it covers (exactly-once), or in a world without a broker (TopologyTestDriver).
     */
    public void inLog(long reservedUntil) {
        acked.inLog(reservedUntil);
    }

    /** Stream thread: the highest reservation that covers IDs now (-1: none). */
    public long acked() {
        return acked.covered(lease);
    }

    /**
     * Stream thread: sends the next reservation if the one sent reaches less than half a window past {@code time}
     * (time units: the generator's position, or the clock's). Called after each ID and by the task's renewal punctuation.
     */
    public void renew(long time) {
        if (windowUnits > 0 && time >= 0 && sentTime - time < windowUnits / 2 + 1) {
            reserve(time);
        }
    }

    /**
     * Stream thread: returns once {@code id} (of time unit {@code time}) is covered by an acknowledged reservation,
     * sending one first if none sent covers it. The fast path is one volatile read.
     *
     * @return nanoseconds waited (0 when it was covered already)
     * @throws TaskMigratedException when the task may not write now (its lease lapsed) or no acknowledgement came in time:
     *                               the ID is dropped, and the partition goes back to the group
     */
    public long awaitCovered(long id, long time) {
        if (acked.covers(id, lease)) {
            return 0;
        }
        if (sent < id) {
            boolean written = windowUnits == 0 ? write(id, -1) : reserve(time);
            if (!written || sent < id) {
                log.atWarn().addKeyValue("event", "lease-lapsed-while-issuing").addKeyValue("task", name)
                        .log("{}: ID {} needs a reservation, but {}: the ID is dropped, no further ID is issued here: closing"
                                + " the task and rejoining the group", name, id,
                                written ? "the time field is at its end" : "the lease was lost or ran out of its term");
                throw new TaskMigratedException(name + ": no reservation could be written for ID " + id
                        + (written ? " (the time field is at its end)" : " (the lease lapsed)"));
            }
        }
        waiting.run();
        long nanos = acked.await(id, lease, name, "the reservation up to " + sent, "ID " + id);
        waited.accept(nanos);
        return nanos;
    }

    /**
     * Stream thread: whether an ID of time unit {@code time} would wait in {@link #awaitCovered} now: no acknowledged
     * reservation read back under the lease reaches the end of that unit. Sends the reservation that does if none was sent
     * and asks the lease's verifier for a round; never waits. The task sets its record aside meanwhile, so that its thread
     * stamps the other tasks. False where each ID reserves itself (a window of 0) or no reservation can be written:
     * {@link #awaitCovered} then waits or gives up as before.
     *
     * @param waitingSince when the task's input started waiting ({@link LeaseGuard#ticker} nanos; -1: not yet)
     * @throws TaskMigratedException once the wait outlasted {@link AckWait#MAX_WAIT_NANOS}, as {@link #awaitCovered} would
     */
    public boolean mustWait(long time, long waitingSince) {
        if (windowUnits == 0 || time < 0 || time > layout.maxTime()) {
            return false;
        }
        long needed = layout.encode(time, datacenter, worker, layout.maxSequence());
        if (acked.covers(needed, lease)) {
            return false;
        }
        if (sent < needed && (!reserve(time) || sent < needed)) {
            return false;
        }
        if (acked.covers(needed, lease)) {
            return false;       // counted as made when written (exactly-once: in the IDs' own transaction)
        }
        if (lease.lost()) {
            return false;       // nothing will be read past for this lease: awaitCovered drops the ID and gives up at once
        }
        lease.hurry();
        if (waitingSince >= 0 && lease.ticker().nanoTime() - waitingSince >= AckWait.MAX_WAIT_NANOS) {
            log.atWarn().addKeyValue("event", "reservation-unacknowledged").addKeyValue("task", name)
                    .log("{}: the reservation up to {} was not acknowledged by the changelog and read back under the task's"
                            + " lease in {} ms; its records set aside stay unstamped: closing the task and rejoining the group",
                            name, sent, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(lease.ticker().nanoTime() - waitingSince));
            throw new TaskMigratedException(name + ": reservation not acknowledged in time");
        }
        return true;
    }

    private boolean reserve(long time) {
        long until = Math.min(layout.maxTime(), time + windowUnits);
        return write(layout.encode(until, datacenter, worker, layout.maxSequence()), until);
    }

    private boolean write(long until, long untilTime) {
        if (until <= sent) {
            return true;
        }
        if (!writer.reserve(until)) {
            return false;
        }
        sent = until;
        sentTime = untilTime;
        return true;
    }
}
