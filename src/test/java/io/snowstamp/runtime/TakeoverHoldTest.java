package io.snowstamp.runtime;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class TakeoverHoldTest {
    private static final TopicPartition P0 = new TopicPartition("in", 0);
    private static final TopicPartition P1 = new TopicPartition("in", 1);
    private final Set<TopicPartition> waiting = new HashSet<>();
    private final TakeoverHold hold = new TakeoverHold(waiting::contains);

    @Test
    void shouldHoldTheResumeOfAWaitingTaskUntilItsWaitIsOver() {
        hold.paused(List.of(P0, P1));
        waiting.add(P0);

        assertThat(hold.resumed(List.of(P0, P1))).containsExactly(P1);
        assertThat(hold.release(Set.of(P0, P1))).isEmpty();

        waiting.remove(P0);
        assertThat(hold.release(Set.of(P0, P1))).containsExactly(P0);
        assertThat(hold.release(Set.of(P0, P1))).isEmpty();
        assertThat(hold.heldTotal()).isEqualTo(1);
    }

    @Test
    void shouldLeaveAPartitionPausedThatKafkaStreamsPausedAgainWhileItWasHeld() {
        waiting.add(P0);
        hold.resumed(List.of(P0));
        hold.paused(List.of(P0));       // a full buffer, say
        waiting.remove(P0);

        assertThat(hold.release(Set.of(P0))).isEmpty();
        assertThat(hold.resumed(List.of(P0))).containsExactly(P0);
    }

    @Test
    void shouldForgetPartitionsNoLongerAssigned() {
        waiting.add(P0);
        hold.resumed(List.of(P0));
        assertThat(hold.release(Set.of(P1))).isEmpty();

        waiting.remove(P0);
        assertThat(hold.release(Set.of(P0, P1))).as("revoked while held: Kafka Streams resumes it anew if it comes back").isEmpty();
    }

    @Test
    void shouldCountAsStartingOnlyThePartitionsOfTasksThatHaveNotStarted() {
        hold.paused(List.of(P0, P1));
        assertThat(hold.notStarted()).containsExactlyInAnyOrder(P0, P1);

        hold.resumed(List.of(P0));
        hold.paused(List.of(P0));       // a full buffer of a running task
        assertThat(hold.notStarted()).containsExactly(P1);

        hold.release(Set.of(P1));       // P0 revoked: if it comes back, its task is new
        hold.paused(List.of(P0));
        assertThat(hold.notStarted()).containsExactlyInAnyOrder(P0, P1);
    }

    @Test
    void shouldHoldAgainWhenKafkaStreamsResumesAPartitionStillWaiting() {
        waiting.add(P0);
        hold.resumed(List.of(P0));
        assertThat(hold.resumed(List.of(P0))).isEmpty();
        assertThat(hold.heldTotal()).isEqualTo(1);
    }
}
