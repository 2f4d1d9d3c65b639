package io.snowstamp.sequence;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * What a sequence task learns at its first number under a new lease (the previous owner has stopped by then) and raises
 * its tags above, before any counter opens: segments another holder reserved that the restore did not keep, a state
 * write that landed after a trusted clean-close marker, and numbers the tail shows now. Each step returns whether the
 * stored tags changed, so that the task opens its counters again. One per task incarnation, on its stream thread;
 * separate from {@link SequenceProcessor} because it is the sequence half of design.md's argument (step 3: the new
 * owner's first number lies above every segment the old owner may still number in).
 */
final class LeaseStartRaises {
    /** The processor's logger: operators follow one logger for a task's story. */
    private static final Logger log = LoggerFactory.getLogger(SequenceProcessor.class);
    private static final int LOGGED_RAISES = 10;

    private final int partition;
    private final SegmentStore segmentStore;
    private final SequenceTail tail;
    private final LongSupplier clock;
    /** whether the tail was scanned at start */
    private final boolean tailScanned;
    /** whether tags resume right after their last number issued, inside their reserved segments ({@link ResumeRule}) */
    private boolean resumeInside;
    /** at-least-once, resuming inside: the lease of the clean-close marker trusted (null otherwise) */
    private LeaseMark trustedMarker;
    /** whether {@link #raiseFromLease} ran with the lease record read back: every segment before it is known and raised */
    private boolean leaseRaised;
    /** whether {@link #atFirstNumber} ran: the tail was read again after the previous owner stopped */
    private boolean tailReadAgain;

    LeaseStartRaises(int partition, SegmentStore segmentStore, SequenceTail tail, LongSupplier clock, boolean tailScanned,
                     boolean resumeInside, LeaseMark trustedMarker) {
        this.partition = partition;
        this.segmentStore = segmentStore;
        this.tail = tail;
        this.clock = clock;
        this.tailScanned = tailScanned;
        this.resumeInside = resumeInside;
        this.trustedMarker = trustedMarker;
    }

    /** Whether a tag first seen resumes right after its last number issued (else above its reserved segment). */
    boolean resumeInside() {
        return resumeInside;
    }

    /**
     * The three raises at the first number under the lease; whether the stored tags changed. The lease is checked right
     * before each write ({@link SegmentStore.WriteGate#orStop}): they run once per lease, and the number waiting for them
     * must not follow raises that stopped partway, so a lapse throws as for that number ({@link LeaseGuard#checkIssued});
     * the close writes no marker then unless it completes them ({@code SequenceProcessor#markClosed}).
     */
    boolean atFirstNumber(LeaseGuard lease, PartitionCheckpoint checkpoint) {
        SegmentStore.WriteGate gate = SegmentStore.WriteGate.orStop(lease);
        boolean changed = raiseFromLease(lease, checkpoint, gate);
        changed |= distrustALateMarker(lease, checkpoint, gate);
        changed |= rescanTail(checkpoint, gate);
        tailReadAgain = true;
        return changed;
    }

    /**
     * Whether the tail was read again at the first number. Until then a checkpoint must not move the covered offset: the
     * previous owner's records after the start's scan (under exactly-once, its aborted transaction's: read_uncommitted
     * readers may have seen their numbers) are in no tag's {@code issued} yet, and the read again at the first number
     * starts at the covered offset (the eighth review: a checkpoint in the takeover wait moved it past them).
     */
    boolean tailReadAgain() {
        return tailReadAgain;
    }

    /**
     * Every segment another writer reserved after this task's restore ended and before its lease record was read by the
     * lease reader by now, and the previous owner may number in it (a round of its own read past it before this lease
     * showed) while its records are still on their way: every such tag is raised to the segment's end, so that it resumes
     * above it. The same for a segment the restore read but did not keep: an older holder's write of the tag, sent before
     * a newer holder took the partition, can land after that holder's reservation (under at-least-once nothing flushes
     * the writes of a task's close before the partition moves on: Kafka Streams closes the processors after the
     * revocation's commit, and the clean close of the task's record collector flushes nothing); the restore keeps that
     * lower write as the tag's newest value, below numbers the newer holder forwarded.
     *
     * @param mayWrite asked right before each write: where it stops them, {@link #leaseRaised} stays false and a later
     *                 call raises the rest (the tags already raised are known to the store then)
     * @return whether the stored tags may have changed
     */
    boolean raiseFromLease(LeaseGuard lease, PartitionCheckpoint checkpoint, SegmentStore.WriteGate mayWrite) {
        if (!lease.readBack()) {
            return false;       // records before the lease record may still come: not yet complete
        }
        // only a segment the store does not know: a write of a known one (this task's own raises at its start, the
        // previous holder's issued before its marker) leaves the tag to the resume rule
        Map<String, Long> unknown = new HashMap<>();
        lease.coveredCounters().forEach((tag, maxId) -> {
            TagSegment stored = segmentStore.segment(tag);
            if (stored == null || stored.maxId() < maxId) {
                unknown.put(tag, maxId);
            }
        });
        if (unknown.isEmpty()) {
            leaseRaised = true;
            return false;
        }
        Map<String, String> raised = new TreeMap<>();
        int advanced = segmentStore.raise(unknown, clock.getAsLong(), raised, LOGGED_RAISES, mayWrite);
        if (mayWrite.stopped()) {
            log.info("sequence partition {}: the raise above the segments another holder reserved before lease epoch {}"
                    + " stopped after {} of {} tags: the lease was lost or its term ran out; the rest at the next write the"
                    + " lease allows", partition, checkpoint.epoch(), advanced, unknown.size());
            return true;
        }
        leaseRaised = true;
        if (advanced > 0) {
            log.info("sequence partition {}: {} tags raised above the segments another holder reserved that the restored"
                    + " state does not hold (reserved after the restore, or hidden by an older holder's late write), before"
                    + " lease epoch {} (raised: {})", partition, advanced, checkpoint.epoch(), raised.isEmpty() ? "none" : raised);
        }
        return true;
    }

    /**
     * Whether every segment another holder reserved before this task's lease record is raised in the store: from then on
     * a write of a tag again ({@link LateWrites}) never buries a higher one.
     */
    boolean leaseRaised() {
        return leaseRaised;
    }

    /**
     * Where the restored clean-close marker was trusted (at the first number, or at a close before it): a tag's record
     * that lies after the marker in the log, before this lease record, was written by another holder still running after
     * its own lease ended (a zombie's reservation, sent before it saw the newer lease, landing late). Restored as the
     * tag's newest value it replaced what the marker vouched for, and its {@code issued} may lie below numbers that holder
     * forwarded: every tag resumes above its reserved segment instead.
     */
    boolean distrustALateMarker(LeaseGuard lease, PartitionCheckpoint checkpoint, SegmentStore.WriteGate mayWrite) {
        if (trustedMarker == null || !lease.writtenAfter(trustedMarker)) {
            return false;
        }
        resumeInside = false;
        int skipped = segmentStore.resumeAboveSegments(clock.getAsLong(), mayWrite);
        if (mayWrite.stopped()) {
            return true;        // trustedMarker kept: a close (markClosed) distrusts it again and writes the rest, or no marker
        }
        trustedMarker = null;
        log.info("sequence partition {}: a state write landed after the clean-close marker of the previous holder, before"
                + " lease epoch {}: tags resume above their reserved segments ({} recorded as issued up to their segment's end)",
                partition, checkpoint.epoch(), skipped);
        return true;
    }

    /**
     * The previous owner has stopped by now, and numbers it issued inside a segment it had reserved before this task's
     * restore left no changelog write, so the tail is read again and every tag raised above what it shows.
     */
    private boolean rescanTail(PartitionCheckpoint checkpoint, SegmentStore.WriteGate mayWrite) {
        if (!tailScanned) {
            return false;     // without the tail guard, counters resume above whole reserved segments
        }
        SequenceTail.Scan scan = tail.scan(partition, checkpoint.coveredOffset());
        if (scan.endOffset() >= 0 && scan.endOffset() < checkpoint.coveredOffset()) {
            // the partition ends below what the checkpoint covers: created again (or truncated) since the start's scan,
            // and every record it holds may be the previous owner's, sent during the takeover (a read from the covered
            // offset would see none of them)
            scan = tail.scan(partition, 0);
        }
        if (scan.endOffset() < 0) {
            return false;
        }
        // the read, and each raise, can outlast the term: raises sent after a newer lease showed could land after its record
        // as their tags' newest values (the number waiting for them would be dropped anyway): checked before each write
        Map<String, String> raised = new TreeMap<>();
        int advanced = segmentStore.raiseFromTail(scan, clock.getAsLong(), raised, LOGGED_RAISES, mayWrite);
        if (advanced > 0) {
            log.info("sequence partition {}: the tail read again at the first number of lease epoch {} advanced {} tags"
                    + " (raised: {})", partition, checkpoint.epoch(), advanced, raised.isEmpty() ? "none" : raised);
        }
        return true;
    }
}
