package io.snowstamp.ownership;

/**
 * Ends, at a task's start under exactly-once, the open transaction a dead or frozen previous owner
 * left on the task's output partition. Until the broker aborts such a transaction (its
 * {@code transaction.timeout.ms} after it began, found by a check every
 * {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}, 10 s by default),
 * {@code read_committed} consumers see nothing written to the partition after it, the new owner's
 * records included. Best effort: a fence that cannot run leaves the broker's own abort to happen.
 */
@FunctionalInterface
public interface PredecessorFence {
    /** Fences every other producer with an open transaction on output partition {@code partition}. */
    void fenceOpenTransactions(int partition);

    /** No fencing (at-least-once, or tests). */
    static PredecessorFence none() {
        return partition -> { };
    }
}
