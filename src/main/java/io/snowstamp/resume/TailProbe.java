package io.snowstamp.resume;

/**
 * Finds the highest ID one worker already wrote to its output partition, including records of
 * open or aborted transactions: the IDs "still in the queue" that the changelog alone may not
 * know about (at-least-once crashes, a reset or deleted changelog, a new application.id).
 */
@FunctionalInterface
public interface TailProbe {
    /** What a probe found. */
    /**
     * @param sources the provenance of the records read, for a start under at-least-once ({@link StampedInputs}); null
     *                when not collected
     */
    record Result(long highestId, long scanned, long fromOffset, long endOffset, long millis, StampedInputs.Window sources) {
        /** A probe that did not run (disabled). */
        public static final Result NONE = new Result(-1, 0, -1, -1, 0);

        public Result(long highestId, long scanned, long fromOffset, long endOffset, long millis) {
            this(highestId, scanned, fromOffset, endOffset, millis, null);
        }
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

    /**
     * The inputs of input partition {@code partition} from offset {@code from} on that already have a record in the
     * output partition ({@link StampedInputs#read}): a task starting under at-least-once skips them.
     *
     * @throws RuntimeException when the output cannot be read in time
     */
    default StampedInputs stampedInputs(int partition, String inputTopic, long from) {
        return StampedInputs.NONE;
    }

    /** The probe of {@code recovery.tail-guard=false}. */
    static TailProbe disabled() {
        return (partition, datacenter, worker) -> Result.NONE;
    }
}
