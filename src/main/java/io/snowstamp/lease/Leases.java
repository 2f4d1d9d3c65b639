package io.snowstamp.lease;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;

/** Where a task takes its lease, when its restore ends or at its start (see {@link LeaseVerifier}); one per stamper instance. */
@FunctionalInterface
public interface Leases {
    /**
     * Writes a task's new lease record to its changelog partition and starts verifying it.
     *
     * @param changelog the partition of the changelog that holds the task's lease
     * @param mine      the lease the record names
     * @param key       the record's key, as the store's serde writes it
     * @param value     the record's value, as the store's serde writes it
     * @param name      how log lines name the task, e.g. {@code partition 3 worker 3}
     * @param restoreAgain whether anything another writer put in the changelog after the task's restore sends the task
     *                  back to restore before its first ID (snowflake mode: the old owner's last reservations); false
     *                  where the task reads what it needs again at its first ID instead (sequence mode: the tail)
     */
    LeaseGuard take(TaskId task, TopicPartition changelog, LeaseMark mine, byte[] key, byte[] value, String name,
                    boolean restoreAgain);

    /**
     * The highest epoch any lease record of {@code changelog} named that this instance has read (-1: none). A new lease
     * takes the next epoch above both this and the restored state's: the newest value of a compacted changelog can be a
     * stale writer's, with an epoch below a lease taken after it.
     */
    default long highestEpoch(TopicPartition changelog) {
        return -1;
    }

    /** No lease: every check passes. For topology tests, where no broker holds a changelog. */
    static Leases none() {
        return (task, changelog, mine, key, value, name, restoreAgain) -> LeaseGuard.unchecked();
    }
}
