package io.snowstamp.ownership;


import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.Punctuator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * The tasks of each stream thread that issued IDs beyond the last ID their state names. The first worker-state flush of a
 * commit on a thread ({@link PreCommitStore#flushCache}) runs the hook of every one of them, so the exact last IDs of all
 * the thread's tasks are sent before Kafka Streams flushes the producer (when: below).
 *
 * <p>WHEN: at every commit, except under exactly-once with the tail guard. There a start resumes above the committed
 * output tail, read after fencing the previous owner's open transactions, and the worker state need not name the last
 * ID: writing it anyway made every commit of a busy instance write one changelog partition per output partition, a
 * transaction of 1,024 busy tasks spanned twice the partitions of the records it carried, and each transaction's
 * markers (one per partition) held up the next (benchmarks.md, "1,024 busy partitions"). There the hooks run once the
 * instance stops cleanly, and the state's {@code lastId} is otherwise what its last write saw (a reservation, a
 * heartbeat): a lower bound, {@code reservedUntil} the upper. Without the tail guard the exact {@code lastId} in the
 * transaction of the IDs it names is what a new owner resumes above; under at-least-once a commit is rare (30 s) and
 * cheap.
 *
 * <p>A CLEAN STOP where commits skip the hooks: Kafka Streams flushes a task's stores at its last commit only when the
 * task processed a record or punctuated since its previous commit ({@code StreamTask.prepareCommit}), and an instance
 * stopped a moment after its last record has nothing of the kind: the hooks would never run and the changelog would keep
 * the lower bound. So once the instance stops ({@code StamperStats#stopping()}) each stream thread writes every waiting
 * task's last ID before its next poll of the main consumer ({@link #beforePoll}, called by the stamper's consumer
 * wrapper, at most a poll interval later), into the thread's open transaction, which the stop's last commit then
 * carries (Kafka Streams commits an open transaction even when no task needs a commit:
 * {@code TaskExecutor.commitOffsetsOrTransaction}). {@link #unwritten()} lets the stop wait for that before it closes
 * Kafka Streams ({@code StamperStats#awaitLastIds}). Records the thread still processes after it have their task flushed
 * by the last commit, whose first flush runs the hooks again. Nothing of this runs while the instance runs: no
 * punctuation, no commit of its own.
 *
 * <p>With {@code group.protocol=streams} (KIP-1071) Kafka Streams builds its main consumer itself, with no wrapper: a
 * thread whose poll never came through {@link #beforePoll} falls back to a wall-clock punctuation every
 * {@link #STOP_CHECK} on one of its waiting tasks (the thread's sentinel: one task per thread, whose punctuation makes
 * Kafka Streams commit each time), which does the same at a stop and drops the hooks of tasks whose heartbeat wrote
 * their last ID since, ending when none is left.
 *
 * <p>WHY all at once: Kafka Streams prepares a commit task by task, and each task's preparation flushes its store caches
 * and then the thread's producer ({@code StreamTask.prepareCommit}: flush, {@code RecordCollectorImpl.flush}:
 * {@code producer.flush()}). A hook that wrote only its own task's state right before that flush made every flush wait
 * for one more changelog record: one broker round trip per task and commit, measured as 3.6-4.8 s commits once 1,024
 * tasks issued (a failover's first transactions). Written together, the first flush sends them all and the others find
 * nothing to wait for.
 *
 * <p>Everything but {@link #unwritten()} happens on the stream thread that runs the tasks (a task issues, punctuates, and
 * its stores flush, on its own thread), so each thread keeps its own list.
 */
public final class PreCommitHooks {
    /** How often a thread with last IDs to write looks whether the instance stops: what a clean stop waits at most for it. */
    static final Duration STOP_CHECK = Duration.ofMillis(100);

    /** One task's last ID, waiting to be written to its state. Called on the task's stream thread. */
    public interface Hook {
        /** Writes the task's last ID to its state (nothing once the task closed or lost its lease); it is no longer waiting. */
        void write();

        /** Whether nothing is left to write (the task's state names its last ID already, or the task closed); if so, it is no longer waiting. */
        boolean settled();
    }

    /** Schedules a wall-clock punctuation of the calling task ({@code ProcessorContext#schedule}). */
    @FunctionalInterface
    public interface Scheduler {
        Cancellable schedule(Duration interval, Punctuator punctuator);
    }

    /** One stream thread's waiting hooks and its sentinel. */
    private static final class ThreadHooks {
        final Thread thread = Thread.currentThread();
        final List<Hook> hooks = new ArrayList<>();
        /** Its polls come through {@link #beforePoll}: no sentinel needed. */
        boolean polled;
        /** {@code hooks.size()}, for {@link #unwritten()} on another thread. */
        volatile int waiting;
        Cancellable sentinel;
        Hook sentinelOwner;
    }

    private final List<ThreadHooks> threads = new CopyOnWriteArrayList<>();
    private final ThreadLocal<ThreadHooks> current = ThreadLocal.withInitial(() -> {
        ThreadHooks made = new ThreadHooks();
        threads.add(made);
        return made;
    });
    private final boolean everyCommit;
    private final BooleanSupplier stopping;

    /**
     * @param everyCommit run the hooks at every commit
     * @param stopping    else run them once this says the instance stops cleanly ({@code StamperStats#stopping()})
     */
    public PreCommitHooks(boolean everyCommit, BooleanSupplier stopping) {
        this.everyCommit = everyCommit;
        this.stopping = stopping;
    }

    /**
     * Hooks that run only once the instance stops cleanly (each stream thread writes them before its next poll), which the
     * instance's stop waits for ({@code stream.StamperStats#cleanStopHooks}): sequence mode's {@code issued} under
     * exactly-once, where the periodic checkpoint writes it otherwise.
     *
     * @param stopping whether the instance stops cleanly
     */
    public static PreCommitHooks atCleanStop(BooleanSupplier stopping) {
        return new PreCommitHooks(false, stopping);
    }

    /** {@link #PreCommitHooks(boolean, BooleanSupplier)}, for the stamper's topology. */
    public static PreCommitHooks create(boolean everyCommit, BooleanSupplier stopping) {
        return new PreCommitHooks(everyCommit, stopping);
    }

    /** Whether the instance stops cleanly: a task that issues now writes what it issued at once, for the stop's last commit. */
    public boolean stopping() {
        return stopping.getAsBoolean();
    }

    /**
     * Called on a task's stream thread when the task issues its first ID beyond its state's last ID. {@code scheduler}
     * schedules the thread's sentinel on this task if the thread has none (only where commits skip the hooks).
     */
    public void pending(Hook hook, Scheduler scheduler) {
        ThreadHooks thread = current.get();
        thread.hooks.add(hook);
        thread.waiting = thread.hooks.size();
        cover(thread, hook, scheduler);
    }

    /**
     * Called from a task's punctuations (its start, its heartbeats): if the thread's sentinel went with a task that
     * closed while others still wait, this task takes it on.
     */
    public void cover(Hook hook, Scheduler scheduler) {
        cover(current.get(), hook, scheduler);
    }

    /**
     * Called on a stream thread right before each poll of its main consumer: once the instance stops, the thread's waiting
     * last IDs are written now, for the stop's last commit.
     */
    public void beforePoll() {
        ThreadHooks thread = current.get();
        thread.polled = true;
        if (!everyCommit && !thread.hooks.isEmpty() && stopping.getAsBoolean()) {
            runAll(thread);
            endSentinel(thread);
        }
    }

    /** Runs and forgets the hook of every task of this thread that issued since its last state write (when due, see above). */
    public void runPending() {
        ThreadHooks thread = current.get();
        if (!thread.hooks.isEmpty() && (everyCommit || stopping.getAsBoolean())) {
            runAll(thread);
        }
    }

    /** The task of {@code hook} closes: it waits no longer, and a sentinel it held is gone (another task takes it on). */
    public void closed(Hook hook) {
        ThreadHooks thread = current.get();
        if (thread.hooks.remove(hook)) {
            thread.waiting = thread.hooks.size();
        }
        if (thread.sentinelOwner == hook) {
            endSentinel(thread);
        }
    }

    /**
     * How many tasks' last IDs a clean stop still has to write before its last commit, over every live stream thread:
     * none where every commit writes them (a task that issued since the last commit is flushed by the next, the stop's
     * last included).
     */
    public int unwritten() {
        if (everyCommit) {
            return 0;
        }
        int sum = 0;
        for (ThreadHooks thread : threads) {
            if (thread.thread.isAlive()) {
                sum += thread.waiting;
            } else {
                threads.remove(thread);     // a replaced stream thread: its tasks closed with it
            }
        }
        return sum;
    }

    private void cover(ThreadHooks thread, Hook hook, Scheduler scheduler) {
        if (!everyCommit && !thread.polled && thread.sentinel == null && !thread.hooks.isEmpty()) {
            thread.sentinelOwner = hook;
            thread.sentinel = scheduler.schedule(STOP_CHECK, timestamp -> check(thread));
        }
    }

    /** The sentinel's punctuation: at a clean stop, every waiting last ID now; else forget the settled ones. */
    private void check(ThreadHooks thread) {
        if (stopping.getAsBoolean()) {
            runAll(thread);
        } else {
            thread.hooks.removeIf(Hook::settled);
            thread.waiting = thread.hooks.size();
        }
        if (thread.hooks.isEmpty()) {
            endSentinel(thread);
        }
    }

    private void runAll(ThreadHooks thread) {
        // a copy: a hook's store write must not change the list being run
        List<Hook> due = new ArrayList<>(thread.hooks);
        thread.hooks.clear();
        thread.waiting = 0;
        for (Hook hook : due) {
            hook.write();
        }
    }

    private static void endSentinel(ThreadHooks thread) {
        if (thread.sentinel != null) {
            thread.sentinel.cancel();
        }
        thread.sentinel = null;
        thread.sentinelOwner = null;
    }
}
