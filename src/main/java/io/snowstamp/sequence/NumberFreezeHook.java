package io.snowstamp.sequence;

import io.snowstamp.stream.FreezeHook;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The fault-test hook of sequence mode, off unless the JVM runs with {@code -Dsnowstamp.test.freeze-at-record=N}:
 * from the N-th number this process issues (counted over all its tasks) on, the first one that does not open a new
 * segment stops the whole process with SIGSTOP after the number was taken and before its record is forwarded — a
 * number issued before a takeover whose record reaches the output after it, as one in a producer retry would. Not the
 * first number of a segment: there the reservation could still be on its way too, which is another fault. The test
 * sends SIGCONT once the partition has moved; the record is then forwarded and sent. Once per JVM.
 */
final class NumberFreezeHook {
    private static final AtomicLong COUNT = new AtomicLong();
    private static final NumberFreezeHook NONE = new NumberFreezeHook(Long.MAX_VALUE);

    private final long freezeAt;

    private NumberFreezeHook(long freezeAt) {
        this.freezeAt = freezeAt;
    }

    static NumberFreezeHook fromSystemProperties() {
        String at = System.getProperty(FreezeHook.PROPERTY);
        return at == null ? NONE : new NumberFreezeHook(Long.parseLong(at.trim()));
    }

    /** Before the record of {@code number} is forwarded; {@code opened}: the number is the first of a segment reserved for it. */
    void beforeForward(int partition, String tag, long number, boolean opened) {
        if (this == NONE || COUNT.get() > freezeAt) {
            return;
        }
        if (COUNT.incrementAndGet() >= freezeAt && !opened) {
            COUNT.set(freezeAt + 1);
            FreezeHook.freezeSelf("after number " + number + " of tag " + tag + " (partition " + partition + ") was issued,"
                    + " before its record is forwarded");
        }
    }
}
