package io.snowstamp.stream;

import io.snowstamp.config.IdSettings;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * When a task renews its write-ahead reservation ahead of need ({@code ownership/WriteAhead}): every quarter reservation
 * while the task issued within the last {@code max(30 s, 2 × id.reservation)}, from the moment its lease record was read
 * back, so that steady stamping never waits for a reservation. One per task incarnation, on its stream thread.
 */
final class ReservationRenewal {
    /** How often a task renews its reservation ahead of need (0: never, {@code id.reservation=0}). */
    private final Duration every;
    /**
     * A task that issued nothing for this long stops renewing (its next ID waits for one write): twice the reservation, at
     * least 30 s, so that a sparse input never waits, and an idle partition writes nothing after it. Many idle partitions
     * that all get a record at once wait one write each, one after another on the stream thread.
     */
    private final long idleNanos;
    private Cancellable scheduled;
    /** When the task last issued an ID, or started ({@link System#nanoTime()}): an idle task stops renewing. */
    private long activeAt;
    /** The last ID issued at the last tick (the record path does not read the clock for this). */
    private long seenIssued;

    /**
     * @param reservationUnits the reservation, in time units of the layout
     * @param immediateAcks    whether writes count as made when sent (exactly-once, the test driver): the reservation
     *                         written at a crossing is then enough, nothing is renewed ahead
     */
    ReservationRenewal(IdSettings ids, long reservationUnits, boolean immediateAcks) {
        // renewals keep a busy task ahead of the acknowledgements it waits for
        this.every = reservationUnits == 0 || immediateAcks ? Duration.ZERO
                : Duration.ofMillis(Math.max(10, reservationUnits * ids.layout().unitMillis() / 4));
        this.idleNanos = Math.max(TimeUnit.SECONDS.toNanos(30), ids.reservation().multipliedBy(2).toNanos());
    }

    /**
     * Starts the renewals of a task that starts issuing.
     *
     * @param lastIssued the task's last ID issued (read at each tick)
     * @param readBack   whether the task's lease record was read back
     * @param renew      sends the next reservation
     */
    void start(ProcessorContext<?, ?> context, LongSupplier lastIssued, BooleanSupplier readBack, Runnable renew) {
        activeAt = System.nanoTime();
        seenIssued = lastIssued.getAsLong();
        if (!every.isZero()) {
            scheduled = context.schedule(every, PunctuationType.WALL_CLOCK_TIME, ignored -> renewIfActive(lastIssued, readBack, renew));
        }
    }

    /** A task that issued within {@link #idleNanos} keeps a reservation ahead of its clock: its next ID does not wait. */
    private void renewIfActive(LongSupplier lastIssued, BooleanSupplier readBack, Runnable renew) {
        long now = System.nanoTime();
        long issued = lastIssued.getAsLong();
        if (issued != seenIssued) {
            seenIssued = issued;
            activeAt = now;
        }
        // not before the lease's own record is in the log (read back once): a reservation sent by this producer could land
        // before the lease record the lease's producer sent, which would then be the newest value, with less reserved
        if (now - activeAt < idleNanos && readBack.getAsBoolean()) {
            renew.run();
        }
    }

    void cancel() {
        if (scheduled != null) {
            scheduled.cancel();
            scheduled = null;
        }
    }
}
