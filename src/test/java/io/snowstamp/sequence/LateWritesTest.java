package io.snowstamp.sequence;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.testing.AnsweringTicker;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a sequence task writes a tag again after another holder's late write of it ({@link LateWrites}): only while it
 * may write, and only once every segment reserved before its lease record is known — otherwise the late tags wait.
 */
class LateWritesTest {
    private static final long TERM = Duration.ofMinutes(1).toNanos();
    private static final LeaseMark MINE = new LeaseMark(3, "h#00000000/t");
    /** an older holder, whose write lands late */
    private static final long OLDER = new LeaseMark(2, "g#00000000/t").writer();

    private final AnsweringTicker ticker = new AnsweringTicker(1_000_000_000L);
    private final List<String> logged = new ArrayList<>();
    /** how long the next store write holds the thread (a send that blocks: a full buffer, no metadata) */
    private long holdNext;
    private final ModelStore<SequenceState> store = new ModelStore<>(SequenceNames.STORE, (key, value) -> {
        logged.add(key);
        ticker.park(holdNext);
        holdNext = 0;
    });
    private final SegmentStore segments = new SegmentStore(store, 0);
    private final Map<String, TagCounter> counters = new HashMap<>();
    /** restore ended at offset 10; the changelog before it is the restored state */
    private final PartitionLease lease = new PartitionLease(0, MINE, PartitionLease.NO_RESTORE_CHECK, 10, TERM, TERM);
    private final LeaseGuard guard = LeaseGuard.of(lease, new TaskId(1, 0), "sequence partition 0", ticker);

    LateWritesTest() {
        store.restore(Map.of("order", new TagSegment(1020, 1013, 1011, 10, 1, 0, MINE.writer())));
        segments.writeUnder(MINE.writer());
    }

    private SegmentStore.WriteGate gate() {
        return new SegmentStore.WriteGate(guard::mayWrite);
    }

    private int rewrite(boolean coveredKnown) {
        return LateWrites.rewrite(guard, coveredKnown, segments, counters, ticker::nanoTime, 0);
    }

    @Test
    void shouldKeepTheLateTagsForACallThatMayWrite() {
        LeaseRounds.observe(lease, 11, MINE, -1);
        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 12);
        LeaseRounds.observe(lease, 12, null, 1010, "order", OLDER);           // lower, after this lease record
        ticker.park(2 * TERM);                                                  // no confirmation within the term

        assertThat(rewrite(true)).as("may not write now").isZero();
        assertThat(logged).isEmpty();

        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 13);
        assertThat(rewrite(true)).as("kept, written at the next call that may").isEqualTo(1);
        assertThat(logged).containsExactly("order");
        assertThat(segments.segment("order").writer()).isEqualTo(MINE.writer());
    }

    /**
     * Each late tag's write checks the lease right before it: the first write held the thread past the term, so the second
     * tag is not written then — and not forgotten either: given back, written at the next call that may write.
     */
    @Test
    void shouldGiveBackTheLateTagsLeftOutWhenTheTermRanOutBetweenTwoWrites() {
        store.restore(Map.of("refund", new TagSegment(2020, 2013, 2011, 10, 1, 0, MINE.writer())));
        LeaseRounds.observe(lease, 11, MINE, -1);
        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 12);
        LeaseRounds.observe(lease, 12, null, 1010, "order", OLDER);
        LeaseRounds.observe(lease, 13, null, 2010, "refund", OLDER);
        holdNext = 2 * TERM;

        assertThat(rewrite(true)).as("order, then the term ran out").isEqualTo(1);
        assertThat(logged).containsExactly("order");
        assertThat(guard.hasLateCounters()).as("refund given back").isTrue();
        assertThat(rewrite(true)).as("still no confirmation").isZero();

        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 14);
        assertThat(rewrite(true)).isEqualTo(1);
        assertThat(logged).containsExactly("order", "refund");
        assertThat(guard.hasLateCounters()).isFalse();
    }

    /** The raise above the segments reserved before the lease record, stopped partway, is not taken for done. */
    @Test
    void shouldRaiseTheRestLaterWhenTheTermRanOutBetweenTwoRaises() {
        LeaseStartRaises raises = new LeaseStartRaises(0, segments, SequenceTail.disabled(), ticker::nanoTime, false, false, null);
        SequenceState.PartitionCheckpoint checkpoint = new SequenceState.PartitionCheckpoint(1, 0, 3, MINE.holder(), 0, 0);
        LeaseRounds.observe(lease, 10, null, 1030, "order", OLDER);           // after the restore, before the lease record
        LeaseRounds.observe(lease, 11, null, 3000, "refund", OLDER);
        LeaseRounds.observe(lease, 12, MINE, -1);
        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 13);
        holdNext = 2 * TERM;

        SegmentStore.WriteGate gate = gate();
        assertThat(raises.raiseFromLease(guard, checkpoint, gate)).as("the stored tags changed").isTrue();
        assertThat(gate.stopped()).isTrue();
        assertThat(raises.leaseRaised()).as("refund is not raised: a write of it again now could bury 3000").isFalse();
        assertThat(logged).containsExactly("order");

        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 14);
        assertThat(raises.raiseFromLease(guard, checkpoint, gate())).isTrue();
        assertThat(raises.leaseRaised()).isTrue();
        assertThat(logged).containsExactly("order", "refund");
        assertThat(segments.segment("refund").maxId()).isEqualTo(3000);
    }

    @Test
    void shouldWaitUntilTheSegmentsReservedBeforeTheLeaseRecordAreRaised() {
        LeaseStartRaises raises = new LeaseStartRaises(0, segments, SequenceTail.disabled(), ticker::nanoTime, false, false, null);
        SequenceState.PartitionCheckpoint checkpoint = new SequenceState.PartitionCheckpoint(1, 0, 3, MINE.holder(), 0, 0);
        LeaseRounds.observe(lease, 10, null, 1030, "order", OLDER);           // after the restore, before the lease record
        assertThat(raises.raiseFromLease(guard, checkpoint, gate())).as("the lease record not read back: more may come").isFalse();
        assertThat(rewrite(raises.leaseRaised())).isZero();
        assertThat(logged).as("a write of order at 1020 now would bury 1021..1030").isEmpty();

        LeaseRounds.observe(lease, 11, MINE, -1);
        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 12);
        assertThat(raises.raiseFromLease(guard, checkpoint, gate())).isTrue();
        rewrite(raises.leaseRaised());

        assertThat(segments.segment("order").maxId()).isEqualTo(1030);
        assertThat(logged).as("raised first").startsWith("order");
    }

    @Test
    void shouldNeverWriteOverAHolderOfALaterEpoch() {
        LeaseRounds.observe(lease, 11, MINE, -1);
        LeaseRounds.confirmed(lease, ticker.nanoTime(), ticker.nanoTime(), 12);
        LeaseRounds.observe(lease, 12, null, 1030, "order", new LeaseMark(4, "n#00000000/t").writer());     // the successor's start

        assertThat(guard.hasLateCounters()).as("its lease record comes next: this task stops").isFalse();
        assertThat(rewrite(true)).isZero();
    }
}
