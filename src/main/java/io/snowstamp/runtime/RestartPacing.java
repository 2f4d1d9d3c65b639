package io.snowstamp.runtime;

/**
 * When the stall watch may replace the stream threads again: a growing pause between restarts, so that a stall a
 * restart does not cure never turns into a restart loop (each restart is a rebalance of every task of the instance).
 * The first restart may follow the first stall; after each one the next waits twice as long as the previous pause
 * (from {@code firstGap} up to {@code maxGap}); a look that finds nothing stalled once the pause is over starts the
 * series again. Pure (the caller passes the time). Used by one thread.
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
            if (restarted && settled) {
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
