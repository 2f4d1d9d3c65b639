package io.snowstamp.sequence;

import io.snowstamp.stream.FreezeHook;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fault-test hook of sequence mode, off unless the JVM runs with {@code -Dsnowstamp.test.freeze-at-record=N}:
 * from the N-th number this process issues (counted over all its tasks) on, it stops the whole process with SIGSTOP
 * once. By default at the first number that does not open a new segment, after the number was taken and its checks
 * passed, before its record is forwarded — a number issued before a takeover whose record reaches the output after
 * it, as one in a producer retry would. With {@code -Dsnowstamp.test.freeze-step=segment}: at the first number that
 * opens a new segment, right after the segment's reservation was handed to the producer and before its
 * acknowledgement — a holder cut off with a reservation and that segment's first number both unsent. The test sends
 * SIGCONT once the partition has moved. Once per JVM.
 */
final class NumberFreezeHook {
    private static final AtomicLong COUNT = new AtomicLong();
    private static final AtomicBoolean DONE = new AtomicBoolean();
    private static final NumberFreezeHook NONE = new NumberFreezeHook(Long.MAX_VALUE, false);

    private final long freezeAt;
    /** whether to stop at the first number of a new segment, before its acknowledgement */
    private final boolean atSegment;

    private NumberFreezeHook(long freezeAt, boolean atSegment) {
        this.freezeAt = freezeAt;
        this.atSegment = atSegment;
    }

    static NumberFreezeHook fromSystemProperties() {
        String at = System.getProperty(FreezeHook.PROPERTY);
        return at == null ? NONE
                : new NumberFreezeHook(Long.parseLong(at.trim()), "segment".equals(System.getProperty(FreezeHook.STEP_PROPERTY)));
    }

    /** Right after {@code number} was taken, before it waits for its segment's acknowledgement. */
    void taken(int partition, String tag, long number, boolean opened) {
        if (atSegment && due(opened)) {
            FreezeHook.freezeSelf("after the segment from number " + number + " of tag " + tag + " (partition " + partition
                    + ") was reserved and its first number taken, before the reservation's acknowledgement");
        }
    }

    /** Before the record of {@code number} is forwarded; {@code opened}: the number is the first of a segment reserved for it. */
    void beforeForward(int partition, String tag, long number, boolean opened) {
        if (!atSegment && due(!opened)) {
            FreezeHook.freezeSelf("after number " + number + " of tag " + tag + " (partition " + partition + ") was issued,"
                    + " before its record is forwarded");
        }
    }

    /** Counts a number; true once: at the first {@code eligible} one from the N-th on. */
    private boolean due(boolean eligible) {
        if (this == NONE || DONE.get()) {
            return false;
        }
        return COUNT.incrementAndGet() >= freezeAt && eligible && DONE.compareAndSet(false, true);
    }
}
