package io.snowstamp.stream;

import java.util.ArrayList;
import java.util.List;

/**
 * The tasks of each stream thread that issued IDs since they last wrote their state. The first
 * worker-state flush of a commit on a thread ({@link PreCommitStore#flushCache}) runs the hook of every
 * one of them, so the exact last IDs of all the thread's tasks are sent before Kafka Streams flushes
 * the producer.
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

    /** Called on a task's stream thread when the task issues its first ID after a state write. */
    void pending(Runnable hook) {
        pending.get().add(hook);
    }

    /** Runs and forgets the hook of every task of this thread that issued since its last state write. */
    void runPending() {
        List<Runnable> hooks = pending.get();
        if (hooks.isEmpty()) {
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
