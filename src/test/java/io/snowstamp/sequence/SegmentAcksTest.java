package io.snowstamp.sequence;

import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.stream.AckWait;
import io.snowstamp.stream.WriteAcks;
import io.snowstamp.testing.AnsweringTicker;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A sequence number waits for the changelog's acknowledgement of its segment, as the producer delivers it. */
class SegmentAcksTest {
    private static final String CHANGELOG = "app-sequence-segments-changelog";
    private static final SequenceStateSerde STATES = new SequenceStateSerde();

    private final AnsweringTicker ticker = new AnsweringTicker();
    private final WriteAcks acks = WriteAcks.of(CHANGELOG);

    /** The producer sends the segment of {@code tag} up to {@code maxId}; the broker answers after {@code ackAfterNanos}. */
    private void send(int partition, String tag, long maxId, long ackAfterNanos) {
        Runnable acknowledged = acks.onSend(CHANGELOG, partition, tag.getBytes(StandardCharsets.UTF_8),
                STATES.serialize(null, new TagSegment(maxId, maxId - 10, maxId - 9, 10, 0, 1)));
        assertThat(acknowledged).isNotNull();
        ticker.answer(ackAfterNanos, acknowledged);
    }

    @Test
    void shouldWaitForTheSegmentsAcknowledgementAndGoOnWhenItComes() {
        SegmentAcks segments = new SegmentAcks(acks, 3);
        send(3, "orders", 10, 2_000_000);

        assertThat(segments.await("orders", 1, ticker)).isEqualTo(10);
        assertThat(ticker.nanoTime()).isBetween(2_000_000L, 10_000_000L);
        assertThat(segments.waits()).isEqualTo(1);

        long before = ticker.nanoTime();
        assertThat(segments.await("orders", 10, ticker)).isEqualTo(10);
        assertThat(ticker.nanoTime()).isEqualTo(before);          // covered: no wait
        assertThat(segments.waits()).isEqualTo(1);
    }

    @Test
    void shouldDropTheNumberWhenNoAcknowledgementComesInTime() {
        SegmentAcks segments = new SegmentAcks(acks, 3);
        send(3, "orders", 10, AckWait.MAX_WAIT_NANOS * 2);

        Throwable thrown = catchThrowable(() -> segments.await("orders", 1, ticker));

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
        segments.restored("orders", 5);                      // in the log already

        assertThat(segments.await("orders", 5, ticker)).isEqualTo(5);
        assertThat(catchThrowable(() -> segments.await("orders", 6, ticker))).isInstanceOf(TaskMigratedException.class);

        segments.close();
        assertThat(acks.onSend(CHANGELOG, 3, "orders".getBytes(StandardCharsets.UTF_8),
                STATES.serialize(null, new TagSegment(100, 0, 1, 100, 0, 1)))).isNull();
    }

    @Test
    void shouldTakeEveryWriteAsAcknowledgedWhenAcksAreImmediate() {
        SegmentAcks segments = new SegmentAcks(WriteAcks.immediate(), 3);
        segments.written("orders", 10);

        assertThat(segments.await("orders", 10, ticker)).isEqualTo(10);
        assertThat(ticker.nanoTime()).isZero();
    }
}
