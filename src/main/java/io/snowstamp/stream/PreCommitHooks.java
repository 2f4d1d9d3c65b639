package io.snowstamp.stream;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The tasks of each stream thread that issued IDs since they last wrote their state. The first
 * worker-state flush of a commit on a thread ({@link PreCommitStore#flushCache}) runs the hook of every
 * one of them, so the exact last IDs of all the thread's tasks are sent before Kafka Streams flushes
 * the producer (when: below).
 *
 * <p>WHEN: at every commit, except under exactly-once with the tail guard. There a start resumes above the committed
 * output tail, read after fencing the previous owner's open transactions, and the worker state need not name the last
 * ID: writing it anyway made every commit of a busy instance write one changelog partition per output partition, a
 * transaction of 1,024 busy tasks spanned twice the partitions of the records it carried, and each transaction's
 * markers (one per partition) held up the next (benchmarks.md, "1,024 busy partitions"). There the hooks run at the
 * commits of a clean stop only (for the tasks Kafka Streams flushes then: those that processed a record since their
 * last commit), and the state's {@code lastId} is otherwise what its last write saw (a reservation, a heartbeat): a
 * lower bound, {@code reservedUntil} the upper. Without the tail guard the exact {@code lastId} in the transaction of
 * the IDs it names is what a new owner resumes above; under at-least-once a commit is rare (30 s) and cheap.
 *
 * <p>WHY all at once: Kafka Streams prepares a commit task by task, and each task's preparation
 * flushes its store caches and then the thread's producer ({@code StreamTask.prepareCommit}: flush,
 * {@code RecordCollectorImpl.flush}: {@code producer.flush()}). A hook that wrote only its own task's
 * state right before that flush made every flush wait for one more changelog record: one broker round
 * trip per task and commit, measured as 3.6-4.8 s commits once 1,024 tasks issued (a failover's
 * first transactions). Written together, the first flush sends them all and the others find nothing
 * to wait for.
 *
 * <p>Everything here happens on the stream thread that runs the tasks (a task issues, and its stores
 * flush, on its own thread), so each thread keeps its own list and nothing is shared.
 */
final class PreCommitHooks {
    private final ThreadLocal<List<Runnable>> pending = ThreadLocal.withInitial(ArrayList::new);
    private final boolean everyCommit;
    private final BooleanSupplier stopping;

    /**
     * @param everyCommit run the hooks at every commit
     * @param stopping    else run them once this says the instance stops cleanly ({@link StamperStats#stopping()})
     */
    PreCommitHooks(boolean everyCommit, BooleanSupplier stopping) {
        this.everyCommit = everyCommit;
        this.stopping = stopping;
    }

    /** Called on a task's stream thread when the task issues its first ID after a state write. */
    void pending(Runnable hook) {
        pending.get().add(hook);
    }

    /** Runs and forgets the hook of every task of this thread that issued since its last state write (when due, see above). */
    void runPending() {
        List<Runnable> hooks = pending.get();
        if (hooks.isEmpty() || !(everyCommit || stopping.getAsBoolean())) {
            return;
        }
        // a copy: a hook's store write must not change the list being run
        List<Runnable> due = new ArrayList<>(hooks);
        hooks.clear();
        for (Runnable hook : due) {
            hook.run();
        }
    }
}
