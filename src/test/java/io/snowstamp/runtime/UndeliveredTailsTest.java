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
 * Which input partitions the stall watch must not call waiting: their consumer caught up with the end without delivering a
 * record since it was assigned them (an aborted transaction, markers). Once a record was delivered the partition is
 * judged as any other (a task that got a record and stopped is what the watch is for).
 */
class UndeliveredTailsTest {
    private static final TopicPartition IDLE = new TopicPartition("in", 0);
    private static final TopicPartition BUSY = new TopicPartition("in", 1);

    @Test
    void shouldNameAPartitionCaughtUpWithoutADeliveredRecordUntilOneIsDelivered() throws Exception {
        MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
        consumer.assign(List.of(IDLE, BUSY));
        consumer.updateBeginningOffsets(Map.of(IDLE, 0L, BUSY, 0L));
        consumer.updateEndOffsets(Map.of(IDLE, 4L, BUSY, 1L));
        consumer.seek(IDLE, 4);                             // past an aborted transaction: nothing delivered
        consumer.seek(BUSY, 1);
        UndeliveredTails tails = new UndeliveredTails();
        UndeliveredTails.Poller poller = tails.new Poller();

        poller.afterPoll(consumer, new ConsumerRecords<>(Map.of(BUSY, List.of(new ConsumerRecord<>("in", 1, 0, new byte[0], new byte[0]))),
                Map.of()));

        assertThat(tails.contains(IDLE)).isTrue();
        assertThat(tails.contains(BUSY)).as("it delivered a record").isFalse();

        poller.afterPoll(consumer, new ConsumerRecords<>(Map.of(IDLE, List.of(new ConsumerRecord<>("in", 0, 4, new byte[0], new byte[0]))),
                Map.of()));
        assertThat(tails.contains(IDLE)).as("a record came").isFalse();
    }

    @Test
    void shouldNotNameAPartitionWhoseConsumerIsBehind() {
        MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
        consumer.assign(List.of(IDLE));
        consumer.updateBeginningOffsets(Map.of(IDLE, 0L));
        consumer.updateEndOffsets(Map.of(IDLE, 4L));
        consumer.seek(IDLE, 2);                             // paused, or its fetch stuck: records not delivered yet
        UndeliveredTails tails = new UndeliveredTails();

        tails.new Poller().afterPoll(consumer, ConsumerRecords.empty());

        assertThat(tails.contains(IDLE)).isFalse();
    }
}
