package io.snowstamp.runtime;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which held partitions are stalled: input waiting past the group's committed offset, and neither an ID issued nor
 * the committed offset moved for {@code stallAfter}. A task that works moves one of the two (a record processed is
 * committed within a commit interval; one held back by {@code id.on-excess-lead=pause} is committed too), so only a
 * partition whose records do not reach its task, or whose task cannot commit, keeps both still while input waits.
 * Pure: the caller reads Kafka ({@link StallWatch}). Used by one thread.
 */
final class StallDetector {
    private record Progress(long issued, long committed, long sinceNanos) {
    }

    private final long stallAfterNanos;
    private final Map<Integer, Progress> seen = new HashMap<>();

    StallDetector(long stallAfterNanos) {
        this.stallAfterNanos = stallAfterNanos;
    }

    /**
     * @param issued    per partition held here: IDs its current task issued (a new task starts again from 0)
     * @param committed per partition: the group's committed offset (absent: none committed yet)
     * @param ends      per partition: the input's end offset (absent: unknown, never stalled)
     * @return the partitions stalled now
     */
    Set<Integer> observe(long nowNanos, Map<Integer, Long> issued, Map<Integer, Long> committed, Map<Integer, Long> ends) {
        seen.keySet().retainAll(issued.keySet());
        Set<Integer> stalled = new TreeSet<>();
        issued.forEach((partition, count) -> {
            long offset = committed.getOrDefault(partition, -1L);
            Progress before = seen.get(partition);
            if (before == null || before.issued() != count || before.committed() != offset) {
                seen.put(partition, new Progress(count, offset, nowNanos));
                return;
            }
            Long end = ends.get(partition);
            boolean waiting = end != null && end > Math.max(0, offset);
            if (waiting && nowNanos - before.sinceNanos() >= stallAfterNanos) {
                stalled.add(partition);
            }
        });
        return stalled;
    }

    /** How long {@code partition} has shown no progress (0 when unknown). */
    long stillNanos(int partition, long nowNanos) {
        Progress p = seen.get(partition);
        return p == null ? 0 : nowNanos - p.sinceNanos();
    }
}
