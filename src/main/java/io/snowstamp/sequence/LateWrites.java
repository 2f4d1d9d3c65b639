package io.snowstamp.sequence;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
     *         tag writes would become the newest), or the lease stopped the writes partway (each is checked right before
     *         it: a send can hold the thread past the term); what was left out is done at the next call that may write
     */
    static boolean settle(LeaseGuard lease, LeaseStartRaises raises, PartitionCheckpoint checkpoint, SegmentStore store,
                          Map<String, TagCounter> counters, LongSupplier clock, int partition) {
        if (lease == LeaseGuard.none() || !lease.mayWrite()) {
            return false;
        }
        SegmentStore.WriteGate gate = new SegmentStore.WriteGate(lease::mayWrite);
        // no input, no first number: raised here, or a lower restored value stays newest and compaction drops the higher
        if (!raises.leaseRaised() && raises.raiseFromLease(lease, checkpoint, gate)) {
            counters.clear();
        }
        rewrite(lease, raises.leaseRaised(), store, counters, clock, partition, gate);
        return !gate.stopped();
    }

    /** {@link #rewrite(LeaseGuard, boolean, SegmentStore, Map, LongSupplier, int, SegmentStore.WriteGate)}, while the lease allows. */
    static int rewrite(LeaseGuard lease, boolean coveredKnown, SegmentStore store, Map<String, TagCounter> counters,
                       LongSupplier clock, int partition) {
        return rewrite(lease, coveredKnown, store, counters, clock, partition, new SegmentStore.WriteGate(lease::mayWrite));
    }

    /**
     * @param coveredKnown whether the segments other holders reserved before this task's lease record are all known and
     *                     raised ({@link LeaseStartRaises#leaseRaised}): until then a write here could bury one of them
     * @param mayWrite     asked right before each write: where it says no, the late tags not yet written go back to the
     *                     lease ({@link LeaseGuard#giveBackLateCounters}) for the next call that may write — dropped, their
     *                     late lower writes would stay the newest values. Not a stop of the task: a term that ran out
     *                     without a newer lease comes back with the next confirmation, and a lost lease writes nothing again
     * @return how many tags were written again
     */
    static int rewrite(LeaseGuard lease, boolean coveredKnown, SegmentStore store, Map<String, TagCounter> counters,
                       LongSupplier clock, int partition, SegmentStore.WriteGate mayWrite) {
        if (!lease.hasLateCounters() || !coveredKnown || !mayWrite.getAsBoolean()) {
            return 0;           // the late tags stay for a call that may write: taken now, they would be lost
        }
        List<String> late = new ArrayList<>(lease.takeLateCounters());
        if (late.isEmpty()) {
            return 0;
        }
        long now = clock.getAsLong();
        int written = 0;
        Map<String, Long> covered = lease.coveredCounters();
        for (int i = 0; i < late.size(); i++) {
            String tag = late.get(i);
            TagCounter counter = counters.get(tag);
            TagSegment current = counter != null && counter.written != null
                    ? counter.written.withIssued(Math.max(counter.last, counter.written.issued()), now) : store.segment(tag);
            if (current == null || covered.getOrDefault(tag, -1L) > current.maxId()) {
                continue;       // a segment above this task's, reserved before its lease record: the first number raises to it
            }
            if (!mayWrite.getAsBoolean()) {
                lease.giveBackLateCounters(late.subList(i, late.size()));
                log.info("sequence partition {}: writing late tags again stopped after {}: the lease was lost or its term ran"
                        + " out; {} kept for the next write the lease allows", partition, written, late.size() - i);
                return written;
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
