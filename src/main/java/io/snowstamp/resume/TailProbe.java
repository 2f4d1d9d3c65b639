package io.snowstamp.resume;

/**
 * Finds the highest ID one worker already wrote to its output partition, including records of
 * open or aborted transactions: the IDs "still in the queue" that the changelog alone may not
 * know about (at-least-once crashes, a reset or deleted changelog, a new application.id).
 */
@FunctionalInterface
public interface TailProbe {
    /** What a probe found. */
    record Result(long highestId, long scanned, long fromOffset, long endOffset, long millis) {
        /** A probe that did not run (disabled). */
        public static final Result NONE = new Result(-1, 0, -1, -1, 0);
    }

    /**
     * @param partition output partition (= input partition of the task)
     * @return the highest ID of this datacenter and worker found in the partition's tail, or -1
     * @throws io.snowstamp.SnowstampException when the tail cannot be read in time: the task must
     *         not start on a guess
     */
    Result highestIssued(int partition, long datacenter, long worker);

    /**
     * {@code partition}'s task was closed or turned into a standby (its worker-state store closed or
     * recycled), possibly before it started: a probe that reads ahead ({@link TailPrefetch}) must
     * not use, nor fence for, anything of it from now on. Called on the thread giving it up.
     */
    default void released(int partition) {
    }

    /** The probe of {@code recovery.tail-guard=false}. */
    static TailProbe disabled() {
        return (partition, datacenter, worker) -> Result.NONE;
    }
}
