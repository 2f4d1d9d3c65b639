package io.snowstamp.sequence;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.ownership.AckWait;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.testing.AnsweringTicker;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.function.LongConsumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A sequence number waits for the changelog's acknowledgement of its segment, as the producer delivers it. */
class SegmentAcksTest {
    private static final String CHANGELOG = "app-sequence-segments-changelog";
    private static final SequenceStateSerde STATES = new SequenceStateSerde();

    private final AnsweringTicker ticker = new AnsweringTicker();
    private final WriteAcks acks = WriteAcks.of(CHANGELOG);
    /** A lease whose rounds read everything: only the acknowledgement decides. */
    private final LeaseGuard unchecked = LeaseGuard.unchecked(ticker);

    /** The producer sends the segment of {@code tag} up to {@code maxId}; the broker answers after {@code ackAfterNanos}. */
    private void send(int partition, String tag, long maxId, long ackAfterNanos) {
        send(partition, tag, maxId, ackAfterNanos, 7);
    }

    /** The same, the record landing at changelog offset {@code offset}. */
    private void send(int partition, String tag, long maxId, long ackAfterNanos, long offset) {
        LongConsumer acknowledged = acks.onSend(CHANGELOG, partition, tag.getBytes(StandardCharsets.UTF_8),
                STATES.serialize(null, new TagSegment(maxId, maxId - 10, maxId - 9, 10, 0, 1)));
        assertThat(acknowledged).isNotNull();
        ticker.answer(ackAfterNanos, () -> acknowledged.accept(offset));
    }

    @Test
    void shouldWaitForTheSegmentsAcknowledgementAndGoOnWhenItComes() {
        SegmentAcks segments = new SegmentAcks(acks, 3);
        send(3, "orders", 10, 2_000_000);

        assertThat(segments.await("orders", 1, unchecked)).isEqualTo(10);
        assertThat(ticker.nanoTime()).isBetween(2_000_000L, 10_000_000L);
        assertThat(segments.waits()).isEqualTo(1);

        long before = ticker.nanoTime();
        assertThat(segments.await("orders", 10, unchecked)).isEqualTo(10);
        assertThat(ticker.nanoTime()).isEqualTo(before);          // covered: no wait
        assertThat(segments.waits()).isEqualTo(1);
    }

    @Test
    void shouldDropTheNumberWhenNoAcknowledgementComesInTime() {
        SegmentAcks segments = new SegmentAcks(acks, 3);
        send(3, "orders", 10, AckWait.MAX_WAIT_NANOS * 2);

        Throwable thrown = catchThrowable(() -> segments.await("orders", 1, unchecked));

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageContaining("not acknowledged in time");
        assertThat(ticker.nanoTime()).isBetween(AckWait.MAX_WAIT_NANOS, AckWait.MAX_WAIT_NANOS + 10_000_000);
    }

    @Test
    void shouldCountOnlyTheTagsOwnSegmentsAndTheTasksOwnWrites() {
        SegmentAcks segments = new SegmentAcks(acks, 3);
        send(3, "payments", 100, 0);                         // another tag
        assertThat(acks.onSend(CHANGELOG, 4, "orders".getBytes(StandardCharsets.UTF_8),
                STATES.serialize(null, new TagSegment(100, 0, 1, 100, 0, 1)))).isNull();   // another task's partition
        assertThat(acks.onSend(CHANGELOG, 3, SequenceState.CHECKPOINT_KEY.getBytes(StandardCharsets.UTF_8),
                STATES.serialize(null, PartitionCheckpoint.NONE))).isNull();
        assertThat(segments.opened("orders", 5, true, unchecked)).as("in the log already: no lease reader to say otherwise").isTrue();

        assertThat(segments.await("orders", 5, unchecked)).isEqualTo(5);
        assertThat(catchThrowable(() -> segments.await("orders", 6, unchecked))).isInstanceOf(TaskMigratedException.class);

        segments.close();
        assertThat(acks.onSend(CHANGELOG, 3, "orders".getBytes(StandardCharsets.UTF_8),
                STATES.serialize(null, new TagSegment(100, 0, 1, 100, 0, 1)))).isNull();
    }

    /**
     * A counter that resumes inside a stored segment numbers in it at once only where the lease reader read a record of the
     * tag covering it before the task's own lease record: the store may hold a reservation of the task's earlier
     * incarnation that the changelog never took.
     */
    @Test
    void shouldTakeAStoredSegmentAsInTheLogOnlyWhereTheLeaseReaderReadIt() {
        SegmentAcks segments = new SegmentAcks(acks, 3);
        io.snowstamp.lease.LeaseMark mine = new io.snowstamp.lease.LeaseMark(2, "h");
        io.snowstamp.lease.PartitionLease partitionLease = new io.snowstamp.lease.PartitionLease(3, mine,
                io.snowstamp.lease.PartitionLease.NO_RESTORE_CHECK, 1_000_000_000L, 1_000_000_000L);
        io.snowstamp.lease.LeaseRounds.observe(partitionLease, 0, null, 10, "orders");       // restored: 1..10
        io.snowstamp.lease.LeaseRounds.observe(partitionLease, 1, mine, -1);
        io.snowstamp.lease.LeaseGuard lease = io.snowstamp.lease.LeaseGuard.of(partitionLease,
                new org.apache.kafka.streams.processor.TaskId(0, 3), "p3", io.snowstamp.lease.Ticker.SYSTEM);

        assertThat(segments.opened("orders", 10, true, lease)).isTrue();
        assertThat(segments.opened("orders", 20, true, lease)).as("11..20: the local store's only").isFalse();
        assertThat(segments.opened("orders", 20, false, lease)).as("resumed above it: a new segment is reserved").isTrue();
        assertThat(segments.opened("refund", 5, true, lease)).as("no record of the tag read").isFalse();
    }

    @Test
    void shouldTakeEveryWriteAsAcknowledgedWhenAcksAreImmediate() {
        SegmentAcks segments = new SegmentAcks(WriteAcks.immediate(), 3);
        segments.written("orders", 10);

        assertThat(segments.await("orders", 10, unchecked)).isEqualTo(10);
        assertThat(ticker.nanoTime()).isZero();
    }

    /**
     * A number of a segment counts only once a round confirming the lease read the changelog past the segment's record:
     * rounds answered by a replaced leader that does not know it end below it, and the number is dropped.
     */
    @Test
    void shouldLetNoNumberPassBeforeARoundConfirmingTheLeaseReadPastItsSegment() {
        LeaseMark mine = new LeaseMark(2, "a#1/thread-1");
        PartitionLease lease = LeaseRounds.readBack(3, mine, 6);
        LeaseGuard guard = LeaseGuard.of(lease, new TaskId(0, 3), "sequence partition 3", ticker);
        SegmentAcks segments = new SegmentAcks(acks, 3);
        send(3, "orders", 10, 1_000_000, 7);
        send(3, "orders", 20, 1_000_000, 8);
        ticker.answer(3_000_000, () -> LeaseRounds.confirmed(lease, 3_000_000, 3_000_000, 8));   // reads offset 7, not 8

        assertThat(segments.await("orders", 10, guard)).isEqualTo(10);
        Throwable thrown = catchThrowable(() -> segments.await("orders", 11, guard));

        assertThat(thrown).as("the segment up to 20 is acknowledged at offset 8, never read past")
                .isInstanceOf(TaskMigratedException.class).hasMessageContaining("not acknowledged in time");
    }
}
