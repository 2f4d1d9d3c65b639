package io.snowstamp.sequence;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Writes again, under the task's lease, every tag whose newest record in the changelog another holder wrote after the
 * task's restore ended ({@link LeaseGuard#takeLateCounters}): a write that holder sent before it saw the newer lease, which
 * landed late, before or after the task's lease record. That record may lie below this task's segment of the tag; left the newest, compaction would drop this
 * task's record once its log segment rolled ({@code segment.ms}, 10 minutes), and a next owner that restores later, after
 * a crash of this one, would find the lower value only and number again what this task numbered. Written again, this
 * task's value is the newest. Called from the task's stream thread, before a record and from its punctuations.
 */
final class LateWrites {
    /** The processor's logger: operators follow one logger for a task's story. */
    private static final Logger log = LoggerFactory.getLogger(SequenceProcessor.class);

    /**
     * How often a task looks for late tags besides its records: a late lower write is written over within about a second,
     * not a checkpoint interval — an idle holder that crashed in between left it its tag's newest value, for compaction to
     * keep (the seventh review).
     */
    private static final Duration EVERY = Duration.ofSeconds(1);

    private LateWrites() {
    }

    /** {@link #EVERY}, or the checkpoint interval where that is shorter. */
    static Duration every(Duration checkpointInterval) {
        return checkpointInterval.compareTo(EVERY) < 0 ? checkpointInterval : EVERY;
    }

    /**
     * The task's punctuations, input or none: raises the tags above the segments reserved before the lease record once
     * it was read back, then writes the late tags again ({@link #rewrite}).
     *
     * @return false where this task may not write (no lease, or a zombie with no input, which no record checks: its lower
     *         tag writes would become the newest)
     */
    static boolean settle(LeaseGuard lease, LeaseStartRaises raises, PartitionCheckpoint checkpoint, SegmentStore store,
                          Map<String, TagCounter> counters, LongSupplier clock, int partition) {
        if (lease == LeaseGuard.none() || !lease.mayWrite()) {
            return false;
        }
        // no input, no first number: raised here, or a lower restored value stays newest and compaction drops the higher
        if (!raises.leaseRaised() && raises.raiseFromLease(lease, checkpoint)) {
            counters.clear();
        }
        rewrite(lease, raises.leaseRaised(), store, counters, clock, partition);
        return true;
    }

    /**
     * @param coveredKnown whether the segments other holders reserved before this task's lease record are all known and
     *                     raised ({@link LeaseStartRaises#leaseRaised}): until then a write here could bury one of them
     * @return how many tags were written again
     */
    static int rewrite(LeaseGuard lease, boolean coveredKnown, SegmentStore store, Map<String, TagCounter> counters,
                       LongSupplier clock, int partition) {
        if (!lease.hasLateCounters() || !coveredKnown || !lease.mayWrite()) {
            return 0;           // the late tags stay for a call that may write: taken now, they would be lost
        }
        Set<String> late = lease.takeLateCounters();
        if (late.isEmpty()) {
            return 0;
        }
        long now = clock.getAsLong();
        int written = 0;
        Map<String, Long> covered = lease.coveredCounters();
        for (String tag : late) {
            TagCounter counter = counters.get(tag);
            TagSegment current = counter != null && counter.written != null
                    ? counter.written.withIssued(Math.max(counter.last, counter.written.issued()), now) : store.segment(tag);
            if (current == null || covered.getOrDefault(tag, -1L) > current.maxId()) {
                continue;       // a segment above this task's, reserved before its lease record: the first number raises to it
            }
            TagSegment put = store.put(tag, current.withIssued(current.issued(), now));
            if (counter != null && counter.written != null) {
                counter.written = put;
            }
            written++;
        }
        log.info("sequence partition {}: {} tags written again after another holder's late write of them landed after this"
                + " task's lease record ({})", partition, written, late.size() <= 10 ? late : late.size() + " tags");
        return written;
    }
}
