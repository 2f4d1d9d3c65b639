package io.snowstamp.ownership;

import io.snowstamp.lease.Ticker;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The bounded wait of an ID or a sequence number for the reservation that covers it: acknowledged by the changelog
 * ({@link WriteAcks}) and read back by a round confirming the task's lease ({@link ReadPastAcks}). It waits at most {@link #MAX_WAIT_NANOS}, then the task gives its partition back and the value is
 * dropped — never issued on hope. A wait of a second or more is logged. Stream thread.
 */
public final class AckWait {
    private static final Logger log = LoggerFactory.getLogger(AckWait.class);
    /** How long a value waits for its reservation to be acknowledged before the task gives its partition back. */
    public static final long MAX_WAIT_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** The first pause of a wait for an acknowledgement, doubled up to {@link #MAX_PAUSE_NANOS}: most come within a millisecond. */
    private static final long PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private AckWait() {
    }

    /**
     * Returns once {@code acked} reaches {@code needed}.
     *
     * @param name        how log lines name the task
     * @param reservation how log lines name the reservation waited for ("the reservation up to 17")
     * @param value       how log lines name the value that waits ("ID 17", "number 5 of tag orders")
     * @return nanoseconds waited
     * @throws TaskMigratedException when no acknowledgement came in time: the value is dropped, the partition goes back
     */
    public static long await(LongSupplier acked, long needed, Ticker ticker, String name, String reservation, String value) {
        long start = ticker.nanoTime();
        long pause = PAUSE_NANOS;
        while (acked.getAsLong() < needed) {
            long waited = ticker.nanoTime() - start;
            if (waited >= MAX_WAIT_NANOS) {
                log.atWarn().addKeyValue("event", "reservation-unacknowledged").addKeyValue("task", name)
                        .log("{}: {} was not acknowledged by the changelog and read back under the task's lease in {} ms;"
                                + " {} is dropped, no further one is issued"
                                + " here: closing the task and rejoining the group", name, reservation,
                                TimeUnit.NANOSECONDS.toMillis(waited), value);
                throw new TaskMigratedException(name + ": reservation not acknowledged in time");
            }
            ticker.park(pause);
            pause = Math.min(MAX_PAUSE_NANOS, pause * 2);
        }
        long nanos = ticker.nanoTime() - start;
        if (nanos >= TimeUnit.SECONDS.toNanos(1)) {
            log.info("{}: waited {} ms for {} to be acknowledged and read back", name, TimeUnit.NANOSECONDS.toMillis(nanos), reservation);
        }
        return nanos;
    }
}
