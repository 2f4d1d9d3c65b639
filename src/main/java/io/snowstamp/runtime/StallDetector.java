package io.snowstamp.runtime;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which held partitions are stalled: input waiting past the group's committed offset on a task that is running, and
 * neither an ID issued nor the committed offset moved since the input started waiting, for {@code stallAfter}. A task
 * that works moves one of the two (a record processed is committed within a commit interval; one held back by
 * {@code id.on-excess-lead=pause} is committed too), so only a partition whose records do not reach its task, or whose
 * task cannot commit, keeps both still while input waits.
 *
 * <p>SLOW IS NOT STUCK. The time counts from the first look that saw the input waiting, not from the task's last
 * progress: a partition idle for an hour whose first new record waits a few seconds for something legitimate (a schema
 * lookup) is not a stall. And it counts only while the task is running: not while the instance is not RUNNING (a
 * rebalance, a start), nor while the task's lease is not yet confirmed by the changelog (a start whose lease rounds are
 * slow under load: the task gives its partition back by itself after {@code LeaseGuard}'s wait); each of those starts the
 * count again once over. A new task of the partition (a restart, a rebalance) starts it again too. Pure: the caller
 * reads Kafka ({@link StallWatch}). Used by one thread.
 */
final class StallDetector {
    /**
     * What one look saw of a held partition.
     *
     * @param task           the partition's current task (identity only: a new task is a new start)
     * @param issued         IDs the task issued
     * @param leaseConfirmed whether the changelog confirmed the task's lease once (its own record read back)
     * @param committed      the group's committed offset (-1: none committed yet)
     * @param end            the input's end offset (-1: unknown, never stalled)
     * @param start          the input's log start offset: below it nothing is left to read (retention deleted it), so a
     *                       committed offset below it — none yet, an expired one, a stamper down longer than the
     *                       retention — is no input waiting, and a task that gets no record never commits to move it
     * @param undelivered    the main consumer read up to the end without delivering a record since it was assigned the
     *                       partition ({@link UndeliveredTails}): past the committed offset lie an aborted transaction or
     *                       markers only, nothing for the task, which therefore commits nothing
     */
    record Look(Object task, long issued, boolean leaseConfirmed, long committed, long end, long start, boolean undelivered) {
        Look(Object task, long issued, boolean leaseConfirmed, long committed, long end) {
            this(task, issued, leaseConfirmed, committed, end, 0, false);
        }

        boolean inputWaiting() {
            return end >= 0 && end > firstUnread() && !undelivered;
        }

        /** The first offset the group has yet to read that the log still holds. */
        long firstUnread() {
            return Math.max(Math.max(0, committed), start);
        }
    }

    private record Progress(Object task, long issued, long committed, long waitingSinceNanos) {
    }

    private final long stallAfterNanos;
    private final Map<Integer, Progress> seen = new HashMap<>();

    StallDetector(long stallAfterNanos) {
        this.stallAfterNanos = stallAfterNanos;
    }

    /**
     * @param running whether the instance is RUNNING (not rebalancing, starting or stopping)
     * @param looks   per partition held here: what this look saw
     * @return the partitions stalled now
     */
    Set<Integer> observe(long nowNanos, boolean running, Map<Integer, Look> looks) {
        seen.keySet().retainAll(looks.keySet());
        Set<Integer> stalled = new TreeSet<>();
        looks.forEach((partition, look) -> {
            Progress before = seen.get(partition);
            boolean moved = before == null || before.task() != look.task() || before.issued() != look.issued()
                    || before.committed() != look.committed();
            boolean counts = running && look.leaseConfirmed() && look.inputWaiting();
            long since;
            if (!counts) {
                since = -1;
            } else if (moved || before.waitingSinceNanos() < 0) {
                since = nowNanos;
            } else {
                since = before.waitingSinceNanos();
            }
            seen.put(partition, new Progress(look.task(), look.issued(), look.committed(), since));
            if (since >= 0 && nowNanos - since >= stallAfterNanos) {
                stalled.add(partition);
            }
        });
        return stalled;
    }

    /** How long {@code partition}'s input has waited without progress (0 when it does not wait, or unknown). */
    long stillNanos(int partition, long nowNanos) {
        Progress p = seen.get(partition);
        return p == null || p.waitingSinceNanos() < 0 ? 0 : nowNanos - p.waitingSinceNanos();
    }
}
