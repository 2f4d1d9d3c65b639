package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;

import java.util.HashSet;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Input partitions whose main consumer caught up with the (read_committed) end without delivering one record since it was
 * assigned them: what lies past the group's committed offset is an aborted transaction or transaction markers, nothing
 * for the task — and Kafka Streams commits no offset for a task that got no record, so the committed offset stays below
 * that end until a real record comes. The stall watch ({@link StallWatch}) must not call such an input waiting. Each
 * main consumer records its own partitions after its polls (on its stream thread, {@link #afterPoll}); the watch reads
 * them from its own thread ({@link #contains}).
 */
final class UndeliveredTails {
    /** How often a consumer looks again at its partitions that delivered nothing yet. */
    private static final long LOOK_EVERY_NANOS = 1_000_000_000L;

    private final Set<TopicPartition> caughtUpEmpty = ConcurrentHashMap.newKeySet();

    /** Whether {@code partition}'s consumer caught up with its end and delivered nothing since it was assigned it. */
    boolean contains(TopicPartition partition) {
        return caughtUpEmpty.contains(partition);
    }

    /** One main consumer's view: what it delivered since each partition was assigned to it. Used by its stream thread. */
    final class Poller {
        private final Set<TopicPartition> delivered = new HashSet<>();
        private final Set<TopicPartition> tracked = new HashSet<>();
        private long lastLook = System.nanoTime() - LOOK_EVERY_NANOS;

        void afterPoll(Consumer<?, ?> consumer, ConsumerRecords<?, ?> records) {
            if (records != null) {
                delivered.addAll(records.partitions());
                caughtUpEmpty.removeAll(records.partitions());
            }
            long now = System.nanoTime();
            if (now - lastLook < LOOK_EVERY_NANOS) {
                return;
            }
            lastLook = now;
            Set<TopicPartition> assigned = consumer.assignment();
            for (TopicPartition gone : tracked) {
                if (!assigned.contains(gone)) {
                    delivered.remove(gone);
                    caughtUpEmpty.remove(gone);
                }
            }
            tracked.clear();
            tracked.addAll(assigned);
            for (TopicPartition partition : assigned) {
                if (delivered.contains(partition)) {
                    continue;
                }
                OptionalLong lag = consumer.currentLag(partition);
                if (lag.isPresent() && lag.getAsLong() == 0) {
                    caughtUpEmpty.add(partition);
                } else {
                    caughtUpEmpty.remove(partition);
                }
            }
        }
    }
}
