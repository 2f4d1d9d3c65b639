package io.snowstamp.stream;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One hook per running task (by partition) that {@link PreCommitStore} runs right before Kafka
 * Streams flushes the worker-state store for a commit. Tasks register in {@code init} and remove
 * their own hook in {@code close}; a hook runs on its task's stream thread, as the store flush does.
 */
final class PreCommitHooks {
    private final Map<Integer, Runnable> hooks = new ConcurrentHashMap<>();

    void register(int partition, Runnable hook) {
        hooks.put(partition, hook);
    }

    /** Removes {@code hook} if it is still the one registered for {@code partition} (a new task may have replaced it). */
    void remove(int partition, Runnable hook) {
        hooks.remove(partition, hook);
    }

    void run(int partition) {
        Runnable hook = hooks.get(partition);
        if (hook != null) {
            hook.run();
        }
    }
}
