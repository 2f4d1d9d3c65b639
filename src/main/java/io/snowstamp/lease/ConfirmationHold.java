package io.snowstamp.lease;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * A fault-test hook, off unless the JVM runs with {@code -Dsnowstamp.test.hold-confirmations=P:AFTER:FOR} (seconds): the
 * lease reader of the process confirms nothing for changelog partition P from AFTER seconds after its first confirmation
 * there (the task is stamping by then), for FOR seconds — a reader that fell behind on one partition (issue: "the lease reader falls behind under load"). That task's
 * lease runs out of its term and its reservations are not read back, so its next ID must wait; the wait is forced, not
 * hoped for. Once per JVM; every other partition is confirmed as usual.
 */
final class ConfirmationHold {
    static final String PROPERTY = "snowstamp.test.hold-confirmations";
    private static final Logger log = LoggerFactory.getLogger(ConfirmationHold.class);

    private final int partition;
    private final long afterNanos;
    private final long forNanos;
    private long from;
    private long until;
    private boolean started;
    private boolean told;

    private ConfirmationHold(int partition, long afterNanos, long forNanos) {
        this.partition = partition;
        this.afterNanos = afterNanos;
        this.forNanos = forNanos;
    }

    /** The hook of a lease reader starting now: null unless the property is set. */
    static ConfirmationHold fromProperty() {
        String value = System.getProperty(PROPERTY);
        if (value == null) {
            return null;
        }
        String[] parts = value.trim().split(":");
        return new ConfirmationHold(Integer.parseInt(parts[0]), TimeUnit.SECONDS.toNanos(Long.parseLong(parts[1])),
                TimeUnit.SECONDS.toNanos(Long.parseLong(parts[2])));
    }

    /** Whether a round's confirmation of changelog partition {@code partition} is withheld now. */
    boolean holds(int changelogPartition) {
        if (changelogPartition != partition) {
            return false;
        }
        long now = System.nanoTime();
        if (!started) {
            started = true;
            from = now + afterNanos;
            until = from + forNanos;
        }
        boolean holding = now - from >= 0 && now - until < 0;
        if (holding && !told) {
            told = true;
            log.warn("-D{}: confirming nothing for changelog partition {} for {} ms (fault test)", PROPERTY, partition,
                    TimeUnit.NANOSECONDS.toMillis(until - now));
        }
        return holding;
    }
}
