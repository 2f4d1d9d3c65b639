package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

class CommittedBatchTest {
    private static final TopicPartition P0 = new TopicPartition("in", 0);
    private static final TopicPartition P1 = new TopicPartition("in", 1);
    private static final TopicPartition P2 = new TopicPartition("in", 2);

    private final CommittedBatch batch = new CommittedBatch();
    private final List<Set<TopicPartition>> requests = new ArrayList<>();
    private final Map<TopicPartition, OffsetAndMetadata> coordinator = new HashMap<>(Map.of(P0, new OffsetAndMetadata(10),
            P1, new OffsetAndMetadata(11)));
    private final Function<Set<TopicPartition>, Map<TopicPartition, OffsetAndMetadata>> fetch = wanted -> {
        requests.add(Set.copyOf(wanted));
        Map<TopicPartition, OffsetAndMetadata> answer = new HashMap<>();
        wanted.forEach(tp -> answer.put(tp, coordinator.get(tp)));
        return answer;
    };

    @Test
    void shouldAnswerTheTasksStartingTogetherFromOneRequest() {
        Set<TopicPartition> starting = Set.of(P0, P1, P2);
        int[] asked = new int[1];
        java.util.function.Supplier<Set<TopicPartition>> startingNow = () -> {
            asked[0]++;
            return starting;
        };

        assertThat(batch.committed(Set.of(P0), startingNow, fetch)).containsEntry(P0, new OffsetAndMetadata(10));
        assertThat(batch.committed(Set.of(P1), startingNow, fetch)).containsEntry(P1, new OffsetAndMetadata(11));
        assertThat(batch.committed(Set.of(P2), startingNow, fetch)).containsEntry(P2, null).hasSize(1);

        assertThat(requests).containsExactly(starting);
        assertThat(asked[0]).as("the starting partitions are worked out for the request only, not for every task").isEqualTo(1);
        assertThat(batch.requests()).isEqualTo(1);
        assertThat(batch.served()).isEqualTo(2);
    }

    @Test
    void shouldUseEachAnswerOnce() {
        batch.committed(Set.of(P0), () -> Set.of(P0, P1), fetch);
        coordinator.put(P0, new OffsetAndMetadata(20));

        assertThat(batch.committed(Set.of(P0), () -> Set.of(P0, P1), fetch)).containsEntry(P0, new OffsetAndMetadata(20));
        assertThat(batch.requests()).isEqualTo(2);
    }

    @Test
    void shouldFetchAgainAfterAPollOrAResume() {
        batch.committed(Set.of(P0), () -> Set.of(P0, P1, P2), fetch);
        batch.drop(List.of(P1));
        coordinator.put(P1, new OffsetAndMetadata(21));
        assertThat(batch.committed(Set.of(P1), () -> Set.of(P1), fetch)).containsEntry(P1, new OffsetAndMetadata(21));

        batch.dropAll();
        assertThat(batch.committed(Set.of(P2), () -> Set.of(P2), fetch)).containsEntry(P2, null);
        assertThat(batch.requests()).isEqualTo(3);
    }
}
