package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the stall watch does not call waiting: input up to where a consumer read a partition without delivering a record
 * since it was assigned it (an aborted transaction, markers). Input past that position (records produced since that the
 * consumer has not read: paused, a fetch stuck, a thread blocked), and any partition that delivered a record, are judged as
 * any other — the stalls the watch is for.
 */
class UndeliveredTailsTest {
    private static final TopicPartition IDLE = new TopicPartition("in", 0);
    private static final TopicPartition BUSY = new TopicPartition("in", 1);

    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
    private final UndeliveredTails tails = new UndeliveredTails();
    private final UndeliveredTails.Poller poller = tails.new Poller();

    private static ConsumerRecords<byte[], byte[]> delivered(TopicPartition partition, long offset) {
        return new ConsumerRecords<>(Map.of(partition, List.of(new ConsumerRecord<>(partition.topic(), partition.partition(), offset,
                new byte[0], new byte[0]))), Map.of());
    }

    @Test
    void shouldNotCallWaitingWhatAConsumerReadWithoutDeliveringARecordButWhatCameSince() {
        consumer.assign(List.of(IDLE, BUSY));
        consumer.seek(IDLE, 4);                             // past an aborted transaction: nothing delivered
        consumer.seek(BUSY, 1);

        poller.afterPoll(consumer, delivered(BUSY, 0));

        assertThat(tails.readWithoutRecord(IDLE, 4)).isTrue();
        assertThat(tails.readWithoutRecord(IDLE, 5)).as("a record produced since, not read (paused, stuck)").isFalse();
        assertThat(tails.readWithoutRecord(BUSY, 1)).as("it delivered a record").isFalse();
    }

    @Test
    void shouldForgetAPartitionThatDeliveredARecordOrWasAssignedAgain() {
        consumer.assign(List.of(IDLE));
        consumer.seek(IDLE, 4);
        poller.afterPoll(consumer, ConsumerRecords.empty());
        assertThat(tails.readWithoutRecord(IDLE, 4)).isTrue();

        poller.afterPoll(consumer, delivered(IDLE, 4));
        assertThat(tails.readWithoutRecord(IDLE, 4)).as("a record came").isFalse();

        poller.reassigned(List.of(IDLE));                   // given again (a rebalance): nothing delivered since
        assertThat(tails.readWithoutRecord(IDLE, 4)).isFalse();
    }
}
