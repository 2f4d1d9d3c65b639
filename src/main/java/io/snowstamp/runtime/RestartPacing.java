package io.snowstamp.runtime;

/**
 * When the stall watch may replace the stream threads again: a growing pause between restarts, so that a stall a
 * restart does not cure never turns into a restart loop (each restart is a rebalance of every task of the instance).
 * The first restart may follow the first stall; after each one the next waits twice as long as the previous pause
 * (from {@code firstGap} up to {@code maxGap}). The series starts again only once no look has found a stall for the
 * pause plus twice {@code firstGap} since the last restart: a restart gives every task a new start, and the detector
 * counts a stall of the new task only {@code firstGap} after that start (itself seconds later, more on a loaded
 * instance), so a look right after the pause finds nothing stalled even when the restart cured nothing. Calling that
 * cured kept the pause at its first length forever: a restart every 75 s under a stall no restart cures. Pure (the
 * caller passes the time). Used by one thread.
 */
final class RestartPacing {
    private final long firstGapNanos;
    private final long maxGapNanos;
    private long gapNanos;
    private long lastRestartNanos;
    private boolean restarted;

    RestartPacing(long firstGapNanos, long maxGapNanos) {
        this.firstGapNanos = firstGapNanos;
        this.maxGapNanos = Math.max(firstGapNanos, maxGapNanos);
        this.gapNanos = firstGapNanos;
    }

    /**
     * @param stalled whether partitions are stalled at this look
     * @return true when the threads are to be replaced now (counted as done)
     */
    boolean restartNow(long nowNanos, boolean stalled) {
        boolean settled = !restarted || nowNanos - lastRestartNanos >= gapNanos;
        if (!stalled) {
            if (restarted && nowNanos - lastRestartNanos >= gapNanos + 2 * firstGapNanos) {
                restarted = false;      // the last restart cured it: the next stall starts a new series
                gapNanos = firstGapNanos;
            }
            return false;
        }
        if (!settled) {
            return false;
        }
        if (restarted) {
            gapNanos = Math.min(maxGapNanos, gapNanos * 2);
        }
        restarted = true;
        lastRestartNanos = nowNanos;
        return true;
    }

    /** The pause before another restart may follow the last one. */
    long gapNanos() {
        return gapNanos;
    }
}
