package io.snowstamp.lease;

import java.util.concurrent.locks.LockSupport;

/**
 * The monotonic clock and the wait of a task's lease checks: {@link #SYSTEM} in the stamper, a virtual one in the
 * model test that runs two owners through pauses and slow answers (it is what lets that test drive the real checks).
 */
public interface Ticker {
    /** Monotonic nanoseconds, as {@link System#nanoTime()}. */
    long nanoTime();

    /** Waits about {@code nanos} (a park: it may return early). */
    void park(long nanos);

    Ticker SYSTEM = new Ticker() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void park(long nanos) {
            LockSupport.parkNanos(nanos);
        }
    };
}
