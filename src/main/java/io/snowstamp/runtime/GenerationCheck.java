package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;

import java.time.Duration;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Every exactly-once commit that carries records carries input offsets too, so that the group coordinator checks the
 * committing thread's group generation before its records become readable.
 *
 * <p>WHY: Kafka Streams commits a thread's transaction with the input offsets of the tasks that consumed a record since
 * they started, and the group coordinator refuses those offsets (and so the commit) from a member whose generation is
 * gone. A task that consumed nothing since it started — records set aside before its previous owner crashed, restored
 * and stamped by the drain punctuation while its input is idle — commits its records with an empty offset map, and
 * {@code KafkaProducer.sendOffsetsToTransaction} sends nothing for an empty map: no check at all. An owner frozen right
 * after such a drain's sends, before they left its producer (nothing on the output partition yet for
 * {@link TransactionFence} to find), woke after its partitions had moved and committed: its IDs became readable beside
 * the new owner's, which repeat them where the new owner's clock is behind. With offsets in the transaction the
 * coordinator answers such a commit {@code UNKNOWN_MEMBER_ID} or {@code ILLEGAL_GENERATION}, and Kafka Streams aborts it
 * ({@code GenerationCheckIT}).
 *
 * <p>WHAT: where the offsets are empty, the committed offsets of the thread's input partitions whose numbers the
 * transaction wrote to (a task writes its output and changelog partitions of its own number, in both modes), fetched by
 * the thread's main consumer at that moment and sent unchanged: committing the value already committed moves nothing.
 * They are in the consumer's assignment, which while its generation stands no one else commits; where it does not, the
 * commit is refused. Rare: only a commit none of whose tasks consumed a record since it started (an idle instance's
 * state writes, a drain after a start), one committed-offset request each. Fetched with the consumer's
 * {@code read_committed} isolation, the answer waits only where an earlier owner's open transaction still holds one of
 * those offsets (in sequence mode, a routing task of the same number starting on this thread), at most until that
 * transaction ends.
 *
 * <p>NOT COVERED: {@code group.protocol=streams} (Kafka Streams builds that main consumer itself: no thread has one
 * here; the start warns) and an input partition with no committed offset (a group's first commit; offsets gone with a
 * recreated input topic or expired after {@code offsets.retention.minutes} of a stopped group, while records set aside
 * remain); their commits go as Kafka Streams sends them.
 */
final class GenerationCheck {
    /** The main consumer of each stream thread, set at each of its polls. */
    private final ThreadLocal<Consumer<?, ?>> mainConsumers = new ThreadLocal<>();

    /** Called by the calling stream thread's main consumer before each poll. */
    void polledBy(Consumer<?, ?> consumer) {
        mainConsumers.set(consumer);
    }

    /**
     * The offsets to send with the calling thread's transaction: {@code offsets} unless empty, else the committed offsets of
     * the thread's input partitions numbered as a partition in {@code written} (empty where none has one).
     *
     * @param fetchTimeout how long the fetch may take: half the transaction's timeout, so that a group coordinator out of
     *                     reach fails the commit while the transaction can still be aborted, instead of Kafka Streams
     *                     taking a timed-out commit of no task for done and the broker aborting the transaction later
     * @throws CommitFailedException where the committed offsets could not be fetched in time: Kafka Streams then closes
     *                               the thread's tasks as migrated and aborts the transaction (never a commit unchecked)
     */
    Map<TopicPartition, OffsetAndMetadata> offsetsToSend(Map<TopicPartition, OffsetAndMetadata> offsets, BitSet written,
                                                         Duration fetchTimeout) {
        Consumer<?, ?> consumer = mainConsumers.get();
        if (!offsets.isEmpty() || consumer == null || written.isEmpty()) {
            return offsets;
        }
        Set<TopicPartition> candidates = new HashSet<>();
        for (TopicPartition partition : consumer.assignment()) {
            if (written.get(partition.partition())) {
                candidates.add(partition);
            }
        }
        if (candidates.isEmpty()) {
            return offsets;
        }
        Map<TopicPartition, OffsetAndMetadata> fetched;
        try {
            fetched = consumer.committed(candidates, fetchTimeout);
        } catch (TimeoutException e) {
            throw new CommitFailedException("the committed offsets of " + candidates + " that check this commit's group generation"
                    + " were not fetched within " + fetchTimeout.toMillis() + " ms");
        }
        Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
        fetched.forEach((partition, offset) -> {
            if (offset != null) {
                committed.put(partition, offset);
            }
        });
        return committed;
    }
}
