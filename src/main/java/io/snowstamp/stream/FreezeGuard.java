package io.snowstamp.stream;

import org.apache.kafka.streams.errors.TaskMigratedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Keeps a process that was frozen from issuing another ID for a partition it may have lost
 * ({@code at_least_once} only; under exactly-once the group generation checked when the frozen
 * process commits its transaction fences it, and nothing it wrote becomes visible).
 *
 * <p>A partition moves to another instance without its holder's consent only when the group
 * coordinator hears no heartbeat from the holder for {@code session.timeout.ms}. Heartbeats go out
 * every {@code heartbeat.interval.ms} (at most a third of the session timeout), so a process that
 * was frozen for less than half the session timeout cannot have lost a partition that way. After a
 * freeze of half the session timeout or more, the task refuses to issue its next ID and throws
 * {@link TaskMigratedException}: Kafka Streams passes that exception by the processing exception
 * handler (the dead-letter topic never sees the record), closes all the thread's tasks without
 * committing, and rejoins the group; the input record is processed again by whoever owns the
 * partition then, above everything its tail guard and state show. No lease has to be read back:
 * the new owner's lease is not visible before its first ID anyway (it is flushed at its first
 * commit), so checking it could not be sound.
 *
 * <p>Per record: one {@link System#nanoTime()} and two volatile reads.
 */
public final class FreezeGuard {
    private static final Logger log = LoggerFactory.getLogger(FreezeGuard.class);
    /** Kafka's own default when nothing sets the session timeout (snowstamp ships a shorter one). */
    private static final long KAFKA_DEFAULT_SESSION_TIMEOUT_MS = 45_000;
    private static final String SESSION_TIMEOUT = "session.timeout.ms";

    private final FreezeWatch watch;
    private final long limitNanos;
    private final long seenFreezes;
    private final String task;

    private FreezeGuard(FreezeWatch watch, long limitNanos, String task) {
        this.watch = watch;
        this.limitNanos = limitNanos;
        this.seenFreezes = watch.freezes();
        this.task = task;
    }

    /**
     * A guard for one task from now on (call it in {@code Processor#init}, before the lease is taken),
     * its limit half the main consumer's session timeout in {@code appConfigs}.
     *
     * @param task how log lines name the task, e.g. {@code partition 3 worker 3}
     */
    public static FreezeGuard open(Map<String, Object> appConfigs, String task) {
        long limit = TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMillis(appConfigs)) / 2;
        return new FreezeGuard(FreezeWatch.shared(limit), limit, task);
    }

    /** For tests: a guard on a given watch. */
    static FreezeGuard on(FreezeWatch watch, long limitNanos, String task) {
        return new FreezeGuard(watch, limitNanos, task);
    }

    /** The main consumer's session timeout, with Kafka Streams' precedence of prefixes. */
    static long sessionTimeoutMillis(Map<String, Object> appConfigs) {
        for (String key : new String[] {"main.consumer." + SESSION_TIMEOUT, "consumer." + SESSION_TIMEOUT, SESSION_TIMEOUT}) {
            Object value = appConfigs.get(key);
            if (value != null) {
                return Long.parseLong(value.toString().trim());
            }
        }
        return KAFKA_DEFAULT_SESSION_TIMEOUT_MS;
    }

    /**
     * Returns normally unless the process was frozen long enough since this guard opened that the
     * partition may have moved; then logs why and throws.
     *
     * @throws TaskMigratedException after such a freeze, before anything more is issued
     */
    public void check() {
        long frozen = watch.frozenSince(seenFreezes, System.nanoTime(), limitNanos);
        if (frozen == 0) {
            return;
        }
        long frozenMillis = TimeUnit.NANOSECONDS.toMillis(frozen);
        long limitMillis = TimeUnit.NANOSECONDS.toMillis(limitNanos);
        log.atWarn().addKeyValue("event", "freeze-detected").addKeyValue("task", task).addKeyValue("frozenMillis", frozenMillis)
                .log("{}: this process was frozen for {} ms (limit {} ms, half the session timeout); the partition may"
                        + " have moved to another instance, so no further ID is issued here: closing the task and rejoining"
                        + " the group", task, frozenMillis, limitMillis);
        throw new TaskMigratedException(task + ": process frozen for " + frozenMillis
                + " ms, at least half the session timeout; the task may have moved");
    }
}
