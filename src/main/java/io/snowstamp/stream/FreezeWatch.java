package io.snowstamp.stream;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Notices that this whole process was frozen: SIGSTOP, a paused VM or container, a long
 * stop-the-world GC pause. A daemon thread wakes every {@link #TICK_NANOS} and compares the
 * monotonic clock with its previous wake-up; a gap of {@code threshold} or more means that no
 * thread of the process ran for that long, and is counted as a freeze.
 *
 * <p>The count alone would come too late: after a freeze every thread resumes at once, and a
 * stream thread frozen in the middle of a batch may issue its next ID before this thread runs.
 * {@link #frozenSince(long, long, long)} therefore also treats a tick older than the threshold as
 * a freeze in progress. Writes happen in the order count, then tick (both volatile), and readers
 * read tick, then count: a reader that sees the new tick also sees the new count.
 *
 * <p>One per JVM ({@link #shared}); thread-safe; costs a wake-up per tick, nothing per record
 * beyond two volatile reads.
 */
final class FreezeWatch {
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static FreezeWatch shared;

    private volatile long threshold;
    private volatile long freezes;
    private volatile long lastGap;
    private volatile long lastTick;

    FreezeWatch(long thresholdNanos, long now) {
        this.threshold = thresholdNanos;
        this.lastTick = now;
    }

    /**
     * The JVM's watch, started on first use, counting gaps of at least {@code thresholdNanos}
     * (the smallest threshold any caller asked for: one stamper per JVM asks for one).
     */
    static synchronized FreezeWatch shared(long thresholdNanos) {
        if (shared == null) {
            shared = new FreezeWatch(thresholdNanos, System.nanoTime());
            Thread thread = new Thread(shared::run, "snowstamp-freeze-watch");
            thread.setDaemon(true);
            thread.start();
        } else if (thresholdNanos < shared.threshold) {
            shared.threshold = thresholdNanos;
        }
        return shared;
    }

    private void run() {
        while (true) {
            LockSupport.parkNanos(TICK_NANOS);
            tick(System.nanoTime());
        }
    }

    /** One wake-up at monotonic time {@code now}. */
    void tick(long now) {
        long gap = now - lastTick;
        if (gap >= threshold) {
            lastGap = gap;
            freezes = freezes + 1;     // single writer: no lost update
        }
        lastTick = now;
    }

    /** How many freezes were seen so far: a caller keeps it and passes it back to {@link #frozenSince}. */
    long freezes() {
        return freezes;
    }

    /**
     * How long the process was frozen at monotonic time {@code now} since the caller saw
     * {@code seenFreezes}: 0 if not at all (as far as a gap of {@code limitNanos} goes), else the
     * length of the freeze (at least {@code limitNanos}).
     */
    long frozenSince(long seenFreezes, long now, long limitNanos) {
        long tick = lastTick;           // tick first: see the class comment
        long count = freezes;
        if (now - tick >= limitNanos) {
            return now - tick;          // frozen, and this thread runs before the watch noticed
        }
        if (count != seenFreezes) {
            return Math.max(lastGap, limitNanos);
        }
        return 0;
    }
}
