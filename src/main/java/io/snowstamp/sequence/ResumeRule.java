package io.snowstamp.sequence;

import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;

/**
 * Where the tags of a sequence task resume when it starts: right after their last number issued, inside their
 * reserved segments (no gap), or above those segments (a gap of what is left of each, never a repeat). Pure.
 */
final class ResumeRule {
    private ResumeRule() {
    }

    /**
     * Null when the tags of a task starting under lease {@code leased}, on the state {@code restored}, may resume right
     * after their last number issued (inside their reserved segments); otherwise why they resume above them. Inside only
     * where nothing the previous holder issued can still show up in the output after this task read it:
     * <ul>
     *   <li>exactly-once: the previous holder's records still on their way when the tail was read belong to a
     *       transaction it can no longer commit (Kafka Streams commits a transaction only together with the input
     *       offsets, under the group generation that assigned the task; the partition moved, so the commit is refused
     *       and the transaction aborts): read_committed consumers never see those numbers, and this task may issue them.
     *       Only after a holder that ran exactly-once too, covering every earlier holder ({@link #afterExactlyOnce}):
     *       after a switch from at-least-once, the previous holder's records are not transactional, and the
     *       at-least-once rule below decides;
     *   <li>at-least-once, after the previous holder's clean-close marker ({@link SequenceProcessor#close}): the marker
     *       follows the {@code issued} of every tag that holder advanced, so resuming after {@code issued} is above every
     *       number it issued, whether or not its records have reached the log yet; and above every number an earlier
     *       holder may still send: a holder that resumed above its predecessor's segments recorded {@code issued = maxId}
     *       for every tag at its start ({@link SegmentStore#resumeAboveSegments}), numbered or not, and a segment another
     *       holder reserved after its restore was raised the same way at its first number. Trusted only when the marker is the
     *       newest lease there is: this task's epoch is the one right above it (no lease was taken since, as far as this
     *       instance read), and the lease's first check makes sure no other task took that epoch before this one; and
     *       when every tag restored was written last by the marker's holder ({@code late}: one that was not, null when
     *       none): that holder wrote every tag before its marker, so another writer's record is a late write of another
     *       holder, sent before it saw a newer lease, restored as the tag's newest value wherever it landed.
     * </ul>
     * Under exactly-once, never where the output's records after the restored checkpoint are gone ({@link #outputGone}):
     * they alone held the numbers issued since the checkpoint.
     * Otherwise (at-least-once after a crash, a lost lease, a close that wrote no marker; or without the tail guard) a
     * record the previous holder sent may still land — from a producer retry, behind a slow follower, from a frozen
     * process — so every tag resumes above its reserved segment ({@code maxId}).
     */
    static String whyAboveSegments(boolean tailScanned, boolean exactlyOnce, PartitionCheckpoint restored, PartitionCheckpoint leased,
                                   String late, String rival, SequenceTail.Scan scan) {
        if (!tailScanned) {
            return "recovery.tail-guard=false";
        }
        if (exactlyOnce && afterExactlyOnce(restored, rival)) {
            return outputGone(restored, scan);
        }
        if (!restored.closed()) {
            return restored.holder().isEmpty() ? "no previous holder"
                    : exactlyOnce ? "the previous holder ran at-least-once (or an earlier build) and did not close cleanly"
                    : "the previous holder did not close cleanly";
        }
        if (leased.epoch() != restored.epoch() + 1) {
            return "a lease newer than the clean close of epoch " + restored.epoch() + " was taken";
        }
        if (late != null) {
            return "tag '" + late + "' was written last by another holder than the clean close of epoch " + restored.epoch()
                    + " (a late write)";
        }
        return null;
    }

    /**
     * Exactly-once resumes after the numbers the output shows past the checkpoint: why it cannot (null: it can) where
     * those records are gone — deleted before this start read them (retention, deleteRecords: the scan begins above the
     * checkpoint's covered offset, or above 0 after a holder that never checkpointed, without the tail guard), or the
     * partition ends below that offset (the topic created again, a truncated log). (Behind an at-least-once marker its own
     * {@code issued} counts, and without one every tag resumes above its segment anyway.)
     */
    private static String outputGone(PartitionCheckpoint restored, SequenceTail.Scan scan) {
        long covered = Math.max(restored.coveredOffset(), 0);
        if (restored.holder().isEmpty()) {
            return null;
        }
        if (scan.endOffset() < restored.coveredOffset()) {
            return "the output partition ends at " + scan.endOffset() + ", below the checkpoint's " + restored.coveredOffset()
                    + " (the topic created again, or its log truncated)";
        }
        if (scan.fromOffset() > covered) {
            return "the output's records from offset " + covered + " to " + (scan.fromOffset() - 1) + " were deleted"
                    + " (retention, or records deleted) before this start read them";
        }
        return null;
    }

    /**
     * Where a task starting on {@code restored} reads its output partition from: the checkpoint's covered offset, or the
     * whole partition (-1) when a tag's record behind the clean-close marker was written by another holder ({@code late}):
     * that late write may have replaced the marker's holder's value of the tag, and compaction dropped it — nothing in
     * the state then says how high the tag went. Not behind the marker of a build that named no writers: every tag names
     * none there, and none is known to be late ({@code lateWriter} 0). The read is bounded by
     * {@code recovery.tail-guard-timeout} like any other.
     */
    static long scanFrom(PartitionCheckpoint restored, String late, long lateWriter) {
        return late != null && (restored.namesWriters() || lateWriter != 0) ? -1 : restored.coveredOffset();
    }

    /**
     * Whether the restored state is an exactly-once holder's that covers every earlier holder
     * ({@link PartitionCheckpoint#exactlyOnce}), or there was no holder: a new exactly-once holder then resumes inside,
     * and its own lease record says so. Otherwise it says so only once its first number raised the tags above every
     * earlier holder's segments ({@link SequenceProcessor}). Not when a tag restored was written by a {@code rival}, another
     * holder of the checkpoint's epoch or a later one: the checkpoint restored is then a lease record written outside any
     * transaction by a holder that lost its lease (it may run exactly-once while the winner, at-least-once in a switch,
     * still sends numbers), and the winner's numbers need not be transactional.
     */
    static boolean afterExactlyOnce(PartitionCheckpoint restored, String rival) {
        return restored.holder().isEmpty() || restored.exactlyOnce() && rival == null;
    }
}
