package io.snowstamp.stream;

import org.apache.kafka.streams.processor.StreamPartitioner;

import java.util.Optional;
import java.util.Set;

/**
 * Sends each stamped record to the output partition equal to its input partition, so output
 * partition p is written by task p only: its tail then holds the highest ID worker p ever issued.
 */
public final class AlignedPartitioner implements StreamPartitioner<byte[], StampedValue> {
    // one immutable answer per partition, so the hot path allocates nothing
    private volatile Optional<Set<Integer>>[] answers = newAnswers(0);

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, StampedValue value, int numPartitions) {
        int partition = value.partition();
        if (partition >= numPartitions) {
            throw new IllegalStateException("output topic " + topic + " has " + numPartitions
                    + " partitions but input partition " + partition + " needs its own: partition counts must match");
        }
        Optional<Set<Integer>>[] cached = answers;
        if (partition >= cached.length) {
            cached = newAnswers(numPartitions);
            answers = cached;
        }
        return cached[partition];
    }

    @SuppressWarnings("unchecked")
    private static Optional<Set<Integer>>[] newAnswers(int count) {
        Optional<Set<Integer>>[] result = new Optional[count];
        for (int p = 0; p < count; p++) {
            result[p] = Optional.of(Set.of(p));
        }
        return result;
    }
}
