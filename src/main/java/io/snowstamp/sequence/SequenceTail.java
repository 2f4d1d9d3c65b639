package io.snowstamp.sequence;

import java.util.Map;

/**
 * Reads what a sequence task's output partition already holds: the sequence counterpart of the
 * snowflake tail guard. Output partition p is written only by the task of repartition partition p,
 * which holds every tag hashed to p, and a tag's numbers increase in offset order — so reading the
 * partition from the offset the task's state covers up to its end finds the highest number of every
 * tag the state may not know about.
 */
public interface SequenceTail {
    /**
     * What a scan found.
     *
     * @param highest    per tag, the highest number in the scanned records
     * @param fromOffset first offset read (the covered offset, or the start of the partition)
     * @param endOffset  end offset (exclusive) the scan read up to; -1 when the scan did not run
     */
    record Scan(Map<String, Long> highest, long scanned, long fromOffset, long endOffset, long millis) {
        /** A scan that did not run ({@code recovery.tail-guard=false}). */
        public static final Scan NONE = new Scan(Map.of(), 0, -1, -1, 0);

        public Scan {
            highest = Map.copyOf(highest);
        }
    }

    /**
     * Reads output partition {@code partition} with {@code read_uncommitted} (open and aborted
     * transactions count) from {@code max(fromOffset, start of the partition)} to its end offset
     * as of the call.
     *
     * @param fromOffset the offset below which the task's state covers every record; -1 = read it all
     * @throws io.snowstamp.SnowstampException when the partition cannot be read within the timeout:
     *         the task must not start on a guess
     */
    Scan scan(int partition, long fromOffset);

    /**
     * The end offset of the output partition now ({@code read_uncommitted}), or -1 when the tail is
     * not read; for checkpoints.
     *
     * @throws io.snowstamp.SnowstampException when it cannot be read in time
     */
    long endOffset(int partition);

    /** The tail of {@code recovery.tail-guard=false}: never read. */
    static SequenceTail disabled() {
        return new SequenceTail() {
            @Override
            public Scan scan(int partition, long fromOffset) {
                return Scan.NONE;
            }

            @Override
            public long endOffset(int partition) {
                return -1;
            }
        };
    }
}
