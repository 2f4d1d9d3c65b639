package io.snowstamp.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Output partition = input partition, for the partitions {@code TopologyTestDriver} cannot reach. */
class AlignedPartitionerTest {

    private final AlignedPartitioner partitioner = new AlignedPartitioner();

    private Optional<Set<Integer>> partitionsOf(int inputPartition, int outputPartitions) {
        return partitioner.partitions("events.stamped", new byte[] {1}, new StampedValue(inputPartition, new byte[] {2}),
                outputPartitions);
    }

    @Test
    void shouldSendEachRecordToTheOutputPartitionOfItsInputPartition() {
        for (int p = 0; p < 12; p++) {
            assertThat(partitionsOf(p, 12)).as("partition %d", p).contains(Set.of(p));
        }
    }

    @Test
    void shouldIgnoreTheKey() {
        assertThat(partitioner.partitions("t", null, new StampedValue(3, null), 4)).contains(Set.of(3));
        assertThat(partitioner.partitions("t", new byte[] {9, 9, 9}, new StampedValue(3, null), 4)).contains(Set.of(3));
    }

    @Test
    void shouldReuseOneAnswerPerPartition() {
        assertThat(partitionsOf(2, 4)).isSameAs(partitionsOf(2, 4));
    }

    @Test
    void shouldFollowAnOutputTopicThatGrew() {
        assertThat(partitionsOf(1, 2)).contains(Set.of(1));

        assertThat(partitionsOf(5, 8)).contains(Set.of(5));
        assertThat(partitionsOf(1, 8)).contains(Set.of(1));
    }

    @Test
    void shouldRefuseAnInputPartitionWithoutItsOwnOutputPartition() {
        assertThatThrownBy(() -> partitionsOf(4, 4))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("output topic events.stamped has 4 partitions but input partition 4 needs its own:"
                        + " partition counts must match");
    }

    @Test
    void shouldSerializeOnlyTheValueBytes() {
        StampedValueSerializer serializer = new StampedValueSerializer();
        byte[] value = {1, 2, 3};

        assertThat(serializer.serialize("t", new StampedValue(7, value))).isSameAs(value);
        assertThat(serializer.serialize("t", new StampedValue(7, null))).isNull();
        assertThat(serializer.serialize("t", null)).isNull();
    }
}
