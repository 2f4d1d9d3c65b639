package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** Kafka Streams' calls at task starts, as it makes them, against a consumer that counts its committed-offset requests. */
class StartingTasksConsumerTest {
    private static final int TASKS = 64;
    private final List<TopicPartition> partitions = IntStream.range(0, TASKS).mapToObj(p -> new TopicPartition("in", p)).toList();
    private final Set<TopicPartition> waiting = new HashSet<>();
    private final StartStats stats = new StartStats();
    private final CountingConsumer mock = new CountingConsumer();
    /** What the tail prefetch is told: the partitions whose committed offsets a request fetched. */
    private final List<TopicPartition> fetched = new java.util.ArrayList<>();
    private final Consumer<byte[], byte[]> consumer = StartingTasksConsumer.wrap(mock, new TakeoverHold(waiting::contains), stats, () -> { }, fetched::addAll,
            new GenerationCheck());

    @Test
    void shouldAskForTheCommittedOffsetsOfTasksStartingTogetherOnce() {
        mock.assign(partitions);
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        partitions.forEach(tp -> offsets.put(tp, new OffsetAndMetadata(tp.partition() * 10L)));
        mock.commitSync(offsets);
        consumer.pause(partitions);         // Kafka Streams: the new tasks restore first

        for (TopicPartition tp : partitions) {     // StreamTask.completeRestoration, task after task
            assertThat(consumer.committed(Set.of(tp))).containsEntry(tp, new OffsetAndMetadata(tp.partition() * 10L));
            consumer.resume(Set.of(tp));
        }

        assertThat(mock.committedRequests).isEqualTo(1);
        assertThat(stats.committedRequests()).isEqualTo(1);
        assertThat(stats.committedPartitions()).isEqualTo(TASKS);
        // every starting task's offsets came in that one answer: the tail prefetch may read all of them early
        assertThat(fetched).containsExactlyInAnyOrderElementsOf(partitions);
    }

    @Test
    void shouldAskAgainAfterAPoll() {
        mock.assign(partitions);
        consumer.pause(partitions);
        consumer.committed(Set.of(partitions.get(0)));
        consumer.poll(Duration.ZERO);
        consumer.committed(Set.of(partitions.get(1)));

        assertThat(mock.committedRequests).isEqualTo(2);
    }

    @Test
    void shouldKeepTheInputOfATaskWaitingForItsLeasePausedUntilTheWaitIsOver() {
        mock.assign(partitions);
        consumer.pause(partitions);
        waiting.addAll(partitions.subList(0, 10));

        consumer.resume(partitions);
        assertThat(mock.paused()).containsExactlyInAnyOrderElementsOf(partitions.subList(0, 10));

        waiting.clear();
        consumer.poll(Duration.ZERO);
        assertThat(mock.paused()).isEmpty();
        assertThat(stats.held()).isEqualTo(10);
    }

    @Test
    void shouldBeItsOwnIdentity() {
        assertThat(consumer).isEqualTo(consumer).isNotEqualTo(mock);
        assertThat(consumer.hashCode()).isEqualTo(System.identityHashCode(consumer));
    }

    private static final class CountingConsumer extends MockConsumer<byte[], byte[]> {
        int committedRequests;

        CountingConsumer() {
            super("earliest");
        }

        @Override
        public synchronized void assign(Collection<TopicPartition> partitions) {
            super.assign(partitions);
            updateBeginningOffsets(partitions.stream().collect(Collectors.toMap(tp -> tp, tp -> 0L)));
        }

        @Override
        public synchronized Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions, Duration timeout) {
            committedRequests++;
            return super.committed(partitions);
        }

        @Override
        public synchronized Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
            committedRequests++;
            return super.committed(partitions).entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        }
    }
}
