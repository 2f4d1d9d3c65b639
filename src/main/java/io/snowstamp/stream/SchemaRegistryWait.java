package io.snowstamp.stream;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether the stamper waits for the schema registry now (an input schema it has not seen yet, and the
 * registry does not answer), since when and why: read by {@code /health} and the metrics. The waiting
 * tasks log one line a minute between them. Thread-safe.
 */
public final class SchemaRegistryWait {
    private static final long LOG_EVERY_MILLIS = 60_000;

    private volatile long since = -1;
    private volatile String reason;
    private volatile boolean stopped;
    private long nextLog;
    private final AtomicLong failures = new AtomicLong();

    /** A request failed at {@code now}; true when this failure should be logged (the first, then one a minute). */
    synchronized boolean failed(String why, long now) {
        failures.incrementAndGet();
        reason = why;
        if (since < 0) {
            since = now;
            nextLog = now;
        }
        if (now >= nextLog) {
            nextLog = now + LOG_EVERY_MILLIS;
            return true;
        }
        return false;
    }

    /** The registry answered; returns when the wait began (-1: there was none). */
    synchronized long answered() {
        long began = since;
        since = -1;
        reason = null;
        return began;
    }

    /** The stamper is stopping: waiting tasks give up (their records stay unprocessed, so nothing is lost). */
    public void stop() {
        stopped = true;
    }

    boolean stopped() {
        return stopped;
    }

    /** Unix millis since which a task waits for the registry, or -1 when none does. */
    public long waitingSince() {
        return since;
    }

    /** The last failure while waiting (null when not waiting). */
    public String reason() {
        return reason;
    }

    /** Registry requests that failed as an outage, since the start. */
    public long failures() {
        return failures.get();
    }
}
