package io.snowstamp.stream;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The partitions held here that have input waiting and issued nothing for {@code recovery.stall-after}, as the stall
 * watch ({@code runtime/StallWatch}) last saw them, and how often it restarted the stream threads for them: read by
 * {@code /health} and the metrics. Thread-safe.
 */
public final class Stalls {
    private volatile Set<Integer> stalled = Set.of();
    private volatile long since = -1;
    private volatile String detail = "";
    private final AtomicLong restarts = new AtomicLong();
    private volatile Map<Integer, Long> waiting = Map.of();
    private volatile Map<Integer, Long> stuckMillis = Map.of();

    /** What the last check saw: {@code partitions} stalled (empty: none), {@code detail} one line about them. */
    public void seen(Set<Integer> partitions, long nowMillis, String detail) {
        if (partitions.isEmpty()) {
            since = -1;
            this.detail = "";
        } else if (since < 0) {
            since = nowMillis;
        }
        if (!partitions.isEmpty()) {
            this.detail = detail;
        }
        stalled = Set.copyOf(new TreeSet<>(partitions));
    }

    /**
     * What the last check read: per partition held here, the input records past the group's committed offset (a
     * partition absent from {@code records} counts as none waiting).
     */
    public void waiting(Map<Integer, Long> records) {
        waiting = Map.copyOf(records);
    }

    /** The partitions the last check looked at (every partition held here then). */
    public Set<Integer> watched() {
        return waiting.keySet();
    }

    /** Input records of {@code partition} past the group's committed offset at the last check (0: none, or unknown). */
    public long waiting(int partition) {
        return waiting.getOrDefault(partition, 0L);
    }

    /**
     * What the last check judged: per partition held here, how long its input has waited with no progress (no ID issued,
     * the committed offset unmoved: a record sent to the dead-letter topic is progress), counted only while the task
     * runs ({@code runtime/StallDetector}); a partition absent from {@code millis} has none.
     */
    public void stuck(Map<Integer, Long> millis) {
        stuckMillis = Map.copyOf(millis);
    }

    /** How long {@code partition}'s input had waited with no progress at the last check (0: it made progress, or is idle). */
    public long stuckMillis(int partition) {
        return stuckMillis.getOrDefault(partition, 0L);
    }

    /** The stream threads were restarted for a stall. */
    public void restarted() {
        restarts.incrementAndGet();
    }

    public Set<Integer> stalled() {
        return new TreeSet<>(stalled);
    }

    /** When the current stall was first seen (-1: none now). */
    public long since() {
        return since;
    }

    public String detail() {
        return detail;
    }

    public long restarts() {
        return restarts.get();
    }
}
