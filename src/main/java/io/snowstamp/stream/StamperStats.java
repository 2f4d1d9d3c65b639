package io.snowstamp.stream;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** The {@link TaskStats} of the tasks this instance runs now, plus instance-wide counters. */
public final class StamperStats {
    private final Map<Integer, TaskStats> tasks = new ConcurrentHashMap<>();
    private final AtomicLong deadLetters = new AtomicLong();
    private final AtomicLong tasksStarted = new AtomicLong();

    TaskStats open(int partition, long worker, long nowMillis) {
        TaskStats stats = new TaskStats(partition, worker, nowMillis);
        tasks.put(partition, stats);
        tasksStarted.incrementAndGet();
        return stats;
    }

    void close(TaskStats stats) {
        tasks.remove(stats.partition(), stats);
    }

    /** Called by the dead-letter handler for every record it routes. */
    public void deadLetter() {
        deadLetters.incrementAndGet();
    }

    /** The tasks running now, by partition. */
    public Map<Integer, TaskStats> tasks() {
        return new TreeMap<>(tasks);
    }

    public long deadLetters() {
        return deadLetters.get();
    }

    /** Task starts since this instance started (restarts and rebalances included). */
    public long tasksStarted() {
        return tasksStarted.get();
    }
}
