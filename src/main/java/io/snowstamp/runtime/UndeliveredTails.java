package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How far each main consumer read an input partition without delivering one record since it was assigned it: up to that
 * position the input holds an aborted transaction or transaction markers only, nothing for the task — and Kafka Streams
 * commits no offset for a task that got no record, so the group's committed offset stays below that end until a real
 * record comes. The stall watch ({@link StallWatch}) does not call input waiting that ends there; input past it (records
 * produced since, which the consumer has not read: paused, a fetch stuck, a thread blocked) is waiting as any other.
 * Each main consumer records its own partitions after its polls and on its rebalances (its stream thread: {@link Poller});
 * the watch reads them from its own thread ({@link #readWithoutRecord}).
 */
final class UndeliveredTails {
    /** How often a consumer looks again at its partitions that delivered nothing yet. */
    private static final long LOOK_EVERY_NANOS = 1_000_000_000L;

    private final Map<TopicPartition, Long> readTo = new ConcurrentHashMap<>();

    /** Whether {@code partition}'s consumer read up to {@code end} or past it without delivering a record since it was assigned it. */
    boolean readWithoutRecord(TopicPartition partition, long end) {
        Long position = readTo.get(partition);
        return position != null && end <= position;
    }

    /** One main consumer's view: what it delivered since each partition was assigned to it. Used by its stream thread. */
    final class Poller {
        private final Set<TopicPartition> delivered = new HashSet<>();
        private Set<TopicPartition> assigned = Set.of();
        private long lastLook = System.nanoTime() - LOOK_EVERY_NANOS;

        /** Partitions assigned to this consumer, or taken from it (its rebalance listener): nothing delivered by it yet. */
        void reassigned(Collection<TopicPartition> partitions) {
            delivered.removeAll(partitions);
            partitions.forEach(readTo::remove);
        }

        void afterPoll(Consumer<?, ?> consumer, ConsumerRecords<?, ?> records) {
            if (records != null && !records.isEmpty()) {
                for (TopicPartition partition : records.partitions()) {
                    delivered.add(partition);
                    readTo.remove(partition);
                }
            }
            long now = System.nanoTime();
            if (now - lastLook < LOOK_EVERY_NANOS) {
                return;
            }
            lastLook = now;
            Set<TopicPartition> current = consumer.assignment();
            Set<TopicPartition> gone = new HashSet<>(assigned);
            gone.removeAll(current);
            reassigned(gone);
            assigned = new HashSet<>(current);
            for (TopicPartition partition : current) {
                if (delivered.contains(partition)) {
                    continue;
                }
                try {
                    readTo.put(partition, consumer.position(partition, Duration.ZERO));
                } catch (RuntimeException unknownYet) {
                    readTo.remove(partition);       // no position yet: the next look
                }
            }
        }
    }
}
