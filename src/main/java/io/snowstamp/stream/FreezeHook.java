package io.snowstamp.stream;

import io.snowstamp.ownership.Issuer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault-test pauses inside an ID's steps, off unless the JVM runs with one of two properties. The N-th record this
 * process stamps (counted over all its tasks) pauses in the middle of a batch:
 *
 * <ul>
 *   <li>{@code -Dsnowstamp.test.freeze-at-record=N} stops the whole process with SIGSTOP — by default before the lease
 *       check of its ID, with {@code -Dsnowstamp.test.freeze-step=checked} (or {@code taken}, {@code covered}) at that
 *       later point of {@link Issuer#issue}: between the check and the ID, the worst moment for a zombie. The test waits
 *       until the partitions have moved, then sends SIGCONT; the stamper goes on as if nothing happened;</li>
 *   <li>{@code -Dsnowstamp.test.pause-thread-at-record=N} with {@code -Dsnowstamp.test.pause-thread-seconds=S} stops the
 *       stream thread alone for S seconds, before the lease check: the heartbeat and the producer's sender go on, so past
 *       {@code max.poll.interval.ms} the group moves the thread's partitions while the process still runs, and the
 *       thread wakes into the usual check.</li>
 * </ul>
 *
 * <p>Each once per JVM. Without either property every task gets {@link Issuer.Steps#NONE}. Sequence mode counts its
 * numbers itself and stops the process through {@link #freezeSelf}.
 */
public final class FreezeHook implements Issuer.Steps {
    public static final String PROPERTY = "snowstamp.test.freeze-at-record";
    public static final String STEP_PROPERTY = "snowstamp.test.freeze-step";
    public static final String PAUSE_PROPERTY = "snowstamp.test.pause-thread-at-record";
    public static final String PAUSE_SECONDS_PROPERTY = "snowstamp.test.pause-thread-seconds";
    private static final Logger log = LoggerFactory.getLogger(FreezeHook.class);
    private static final AtomicLong COUNT = new AtomicLong();

    private final long freezeAt;
    private final Issuer.Step step;
    private final long pauseAt;
    private final long pauseSeconds;
    private final String task;
    private boolean armed;

    private FreezeHook(long freezeAt, Issuer.Step step, long pauseAt, long pauseSeconds, String task) {
        this.freezeAt = freezeAt;
        this.step = step;
        this.pauseAt = pauseAt;
        this.pauseSeconds = pauseSeconds;
        this.task = task;
    }

    /** The steps of one task's IDs: {@link Issuer.Steps#NONE}, or with either system property set, this hook. */
    static Issuer.Steps steps(String task) {
        String at = System.getProperty(PROPERTY);
        String pauseAt = System.getProperty(PAUSE_PROPERTY);
        if (at == null && pauseAt == null) {
            return Issuer.Steps.NONE;
        }
        String step = System.getProperty(STEP_PROPERTY, "before_check").trim().replace('-', '_').toUpperCase(Locale.ROOT);
        return new FreezeHook(at == null ? Long.MAX_VALUE : Long.parseLong(at.trim()), Issuer.Step.valueOf(step),
                pauseAt == null ? Long.MAX_VALUE : Long.parseLong(pauseAt.trim()),
                Long.parseLong(System.getProperty(PAUSE_SECONDS_PROPERTY, "0").trim()), task);
    }

    @Override
    public void at(Issuer.Step now) {
        if (now == Issuer.Step.BEFORE_CHECK) {
            long count = COUNT.incrementAndGet();
            armed = count == freezeAt;
            if (count == pauseAt) {
                pauseThread();
            }
        }
        if (armed && now == step) {
            armed = false;
            freezeSelf();
        }
    }

    private void pauseThread() {
        log.warn("fault-test hook ({}={}): pausing this stream thread for {} s before the lease check of an ID of {}",
                PAUSE_PROPERTY, pauseAt, pauseSeconds, task);
        try {
            Thread.sleep(java.util.concurrent.TimeUnit.SECONDS.toMillis(pauseSeconds));
        } catch (InterruptedException e) {
            // a shutdown: the check below decides as after any pause
            Thread.currentThread().interrupt();
        }
        log.info("fault-test hook: stream thread woke after its pause; the lease check decides whether {} still stamps here",
                task);
    }

    private void freezeSelf() {
        freezeSelf("at " + step + " of an ID of " + task);
    }

    /** Stops this process with SIGSTOP; returns once SIGCONT resumed it. {@code where} says where, for the log. */
    public static void freezeSelf(String where) {
        long pid = ProcessHandle.current().pid();
        log.warn("fault-test hook: stopping this process (SIGSTOP, pid {}) {}", pid, where);
        try {
            // returns once SIGCONT has resumed this process (kill itself exits right after signalling)
            long gap = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(500);
            long sent = System.nanoTime();
            new ProcessBuilder("kill", "-STOP", String.valueOf(pid)).inheritIO().start().waitFor();
            // on a loaded machine kill's exit can be seen here before the stop took hold of this thread: stay at this
            // point until a gap in the monotonic clock shows the process was stopped (at most 60 s)
            long give = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            boolean stopped = System.nanoTime() - sent >= gap;      // the usual case: stopped and resumed inside waitFor
            while (!stopped && System.nanoTime() - give < 0) {
                long before = System.nanoTime();
                Thread.sleep(5);
                stopped = System.nanoTime() - before > gap;
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("test hook: cannot run kill -STOP: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log.warn("fault-test hook: resumed (SIGCONT); stamping goes on where it stopped");
    }
}
