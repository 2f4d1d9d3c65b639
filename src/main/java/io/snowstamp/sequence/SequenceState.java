package io.snowstamp.sequence;

import java.util.Objects;

/**
 * What a sequence task keeps in its {@code sequence-segments} store: one {@link TagSegment} per tag
 * (key = the tag) and one {@link PartitionCheckpoint} (key {@link #CHECKPOINT_KEY}). Both live in one
 * store on purpose: its changelog partition is written in order by one producer, so when a checkpoint
 * is durable, every segment written before it is durable too. {@link SequenceStateSerde} documents
 * the binary format.
 */
public sealed interface SequenceState permits SequenceState.TagSegment, SequenceState.PartitionCheckpoint {

    /** Store key of the partition checkpoint; tags never contain control characters, so it cannot clash. */
    String CHECKPOINT_KEY = "\u0000checkpoint";

    /**
     * The segment of numbers reserved for one tag, and how far the tag had got when this was written.
     * After a start with the tail scan the tag resumes after {@code max(issued, highest number found in
     * the scan)}, inside the segment; without the scan, above {@code maxId}.
     *
     * @param maxId        highest number reserved (Leaf's {@code max_id}); every issued number is at most this
     * @param issued       no number of the tag above this had been issued when this was written: the last
     *                     number issued (-1: none); at a reservation below {@code segmentStart}: the one right
     *                     before it when the previous segment was used up, lower when reserved at half use;
     *                     written at each reservation and, for the tags that advanced, at each checkpoint;
     *                     {@code maxId} when unknown (format version 1 did not record it)
     * @param segmentStart first number of the reserved segment, or -1 when {@code maxId} was raised by the
     *                     tail scan (numbers found in the output partition) rather than reserved
     * @param step         size of the reserved segment; 0 when raised by the tail scan
     * @param revision     revision of the tag definition the step came from (0: defaults or tail scan)
     * @param updatedAt    wall-clock Unix millis of the write
     * @param writer       the holder that wrote it, {@link io.snowstamp.lease.LeaseMark#writer} of its lease (0: unknown,
     *                     before format version 4). A holder's clean close writes every tag before its marker, so a tag
     *                     restored behind a marker with another writer is a late write of another holder ({@link ResumeRule})
     */
    record TagSegment(long maxId, long issued, long segmentStart, long step, long revision, long updatedAt, long writer)
            implements SequenceState {
        public TagSegment {
            if (maxId < 0 || issued < -1 || issued > maxId || segmentStart < -1 || step < 0 || revision < 0 || writer < 0
                    || (segmentStart >= 0 && segmentStart > maxId)) {
                throw new IllegalArgumentException("impossible tag segment: maxId=" + maxId + " issued=" + issued
                        + " segmentStart=" + segmentStart + " step=" + step + " revision=" + revision + " writer=" + writer);
            }
        }

        /** A segment of unknown writer (0), as read from a state written before format version 4. */
        public TagSegment(long maxId, long issued, long segmentStart, long step, long revision, long updatedAt) {
            this(maxId, issued, segmentStart, step, revision, updatedAt, 0);
        }

        /** A state that only records the highest number found in the output partition (issued, as far as anyone knows). */
        public static TagSegment fromTail(long highest, long now) {
            return new TagSegment(highest, highest, -1, 0, 0, now);
        }

        /** This segment with {@code last} as the last number issued, written at {@code now}. */
        public TagSegment withIssued(long last, long now) {
            return new TagSegment(maxId, last, segmentStart, step, revision, now, writer);
        }

        /** This segment as written by {@code by} ({@link io.snowstamp.lease.LeaseMark#writer}). */
        public TagSegment writtenUnder(long by) {
            return new TagSegment(maxId, issued, segmentStart, step, revision, updatedAt, by);
        }
    }

    /**
     * Per task: who holds the partition, and how far its output partition is covered by this store.
     *
     * @param partitions    partition count of the output (and repartition) topic the tags were spread over;
     *                      0 before the first start
     * @param coveredOffset every record of the output partition below this offset has its tag in this store,
     *                      with {@code maxId} and {@code issued} at or above its number; -1 = nothing is known
     *                      (scan from the start)
     * @param epoch         bumped at each task start
     * @param holder        {@code instance-id#nonce/stream-thread} of the current holder
     * @param acquiredAt    wall-clock Unix millis of the task start
     * @param checkpointAt  wall-clock Unix millis when {@code coveredOffset} was recorded
     * @param closed        the clean-close marker: written by the holder's task close, after its last number and
     *                      after {@code issued} of every tag it advanced; the holder issues nothing after it. Any
     *                      other write of the checkpoint (a new lease, a periodic checkpoint) clears it
     * @param exactlyOnce   the holder runs exactly-once and no number of an earlier at-least-once holder lies above
     *                      the store's {@code issued}: the holder either took over from such holders only, or (after an
     *                      at-least-once one) raised every tag above its predecessors' segments at its first number. Any
     *                      number it forwarded then belongs to a transaction, which aborts once the partition moved, so
     *                      none lands visible after the next holder read the output. False for at-least-once and for a
     *                      state written before format version 4 (not known)
     * @param namesWriters  whether the holder's build names the writer of every tag record (format version 4): behind
     *                      its marker, a tag of writer 0 is an older build's late write, not an older format's state
     */
    record PartitionCheckpoint(int partitions, long coveredOffset, long epoch, String holder, long acquiredAt,
                               long checkpointAt, boolean closed, boolean exactlyOnce, boolean namesWriters) implements SequenceState {
        public static final PartitionCheckpoint NONE = new PartitionCheckpoint(0, -1, 0, "", 0, 0);

        public PartitionCheckpoint {
            Objects.requireNonNull(holder, "holder");
            if (partitions < 0 || coveredOffset < -1 || epoch < 0) {
                throw new IllegalArgumentException("impossible partition checkpoint: partitions=" + partitions
                        + " coveredOffset=" + coveredOffset + " epoch=" + epoch);
            }
        }

        /** A checkpoint without the clean-close marker, of an at-least-once holder. */
        public PartitionCheckpoint(int partitions, long coveredOffset, long epoch, String holder, long acquiredAt, long checkpointAt) {
            this(partitions, coveredOffset, epoch, holder, acquiredAt, checkpointAt, false, false, true);
        }

        /** A checkpoint of an at-least-once holder. */
        public PartitionCheckpoint(int partitions, long coveredOffset, long epoch, String holder, long acquiredAt, long checkpointAt,
                                   boolean closed) {
            this(partitions, coveredOffset, epoch, holder, acquiredAt, checkpointAt, closed, false, true);
        }

        /** A checkpoint of this build's format. */
        public PartitionCheckpoint(int partitions, long coveredOffset, long epoch, String holder, long acquiredAt, long checkpointAt,
                                   boolean closed, boolean exactlyOnce) {
            this(partitions, coveredOffset, epoch, holder, acquiredAt, checkpointAt, closed, exactlyOnce, true);
        }

        /**
         * The next lease, taken at {@code now}, over {@code count} partitions: its epoch is above both this one's and
         * {@code highestSeen} (the highest any lease record of the partition named that this instance read; -1: none).
         * The newest value of the compacted changelog can be a stale writer's, with an epoch below a lease taken after it.
         * {@code exactlyOnce}: the new holder's, as {@link PartitionCheckpoint#exactlyOnce} says (its lease record goes out of
         * any transaction, a loser's too: a restore trusts it only without a rival's tag record, {@link ResumeRule}).
         */
        public PartitionCheckpoint withNewLease(String newHolder, long now, int count, long highestSeen, boolean exactlyOnce) {
            return new PartitionCheckpoint(count, coveredOffset, Math.max(epoch, highestSeen) + 1, newHolder, now, checkpointAt, false,
                    exactlyOnce, true);
        }

        public PartitionCheckpoint withCoveredOffset(long offset, long now) {
            return new PartitionCheckpoint(partitions, offset, epoch, holder, acquiredAt, now, false, exactlyOnce, namesWriters);
        }

        /** This checkpoint of an exactly-once holder whose tags now lie above every earlier holder's segments. */
        public PartitionCheckpoint coveringEarlierHolders() {
            return new PartitionCheckpoint(partitions, coveredOffset, epoch, holder, acquiredAt, checkpointAt, closed, true, namesWriters);
        }

        /** This checkpoint with the clean-close marker. */
        public PartitionCheckpoint closedCleanly() {
            return new PartitionCheckpoint(partitions, coveredOffset, epoch, holder, acquiredAt, checkpointAt, true, exactlyOnce, namesWriters);
        }
    }
}
