package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The committed offsets of many starting tasks in one request. Kafka Streams 4.3 asks the group
 * coordinator for the committed offsets of each task as it starts it
 * ({@code StreamTask.completeRestoration}: {@code mainConsumer.committed(inputPartitions())}), one round
 * trip per task, one task after another on the stream thread: at 1,024 partitions, ~1,024 sequential
 * requests before the last task runs. Here the first such call after a poll fetches, in one request, the
 * offsets of every assigned partition whose task has not started (Kafka Streams pauses a new task's
 * partitions until it is restored and started, and resumes them then), and the next calls take theirs
 * from that answer, each partition once. Such a request waits, as each of the single ones did, while a
 * previous owner's transaction has an offset commit pending on one of them (the broker holds the answer
 * until it is aborted: {@code TransactionFence} fences it when the partition's restore starts, on the
 * state updater thread; Kafka Streams 4.3 hands every pending task to the state updater before it starts
 * any restored one, {@code TaskManager.checkStateUpdater}, so no request waits on a task the stream
 * thread has yet to hand over). A task that has started (its partitions resumed) is never in a batch: its
 * offsets are this instance's to commit, and one of its commits may be pending.
 *
 * <p><b>Why the answer is still current when used.</b> A partition's committed offset changes only by a
 * commit of its owner's generation (the coordinator refuses a commit, transactional or not, from an older
 * generation). Between two polls the group generation does not change, and a partition whose task has not
 * started has no commit of this instance in flight. So everything fetched is dropped at every poll
 * (rebalances happen inside it, the assignor's own calls included), and a partition Kafka Streams
 * resumes (its task started) or pauses anew is dropped too; a task that is restarted (a corrupted task,
 * closed and started again after its commits) starts after a poll.
 *
 * <p>Used by the main consumer's thread only.
 */
final class CommittedBatch {
    private final Map<TopicPartition, OffsetAndMetadata> fetched = new HashMap<>();
    private long requests;
    private long served;

    /**
     * The committed offsets of {@code partitions}, from an earlier batch when it has them all, else fetched
     * with every partition in {@code startingAlso}.
     *
     * @param fetch one request to the group coordinator (the consumer's own {@code committed})
     */
    Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions, Supplier<Set<TopicPartition>> startingAlso,
                                                     Function<Set<TopicPartition>, Map<TopicPartition, OffsetAndMetadata>> fetch) {
        if (!fetched.keySet().containsAll(partitions)) {
            // asked only when a request goes out: working it out for every task (a copy of the assignment each) cost the
            // stream thread ~8 % of a 1,024-task start
            Set<TopicPartition> wanted = new HashSet<>(startingAlso.get());
            wanted.addAll(partitions);
            Map<TopicPartition, OffsetAndMetadata> answer = fetch.apply(wanted);
            requests++;
            fetched.clear();
            for (TopicPartition tp : wanted) {
                fetched.put(tp, answer.get(tp));    // null: no committed offset, a valid answer too
            }
        } else {
            served += partitions.size();
        }
        Map<TopicPartition, OffsetAndMetadata> result = new HashMap<>();
        for (TopicPartition tp : partitions) {
            result.put(tp, fetched.remove(tp));
        }
        return result;
    }

    /** A poll, or Kafka Streams pausing or resuming {@code partitions}: what was fetched for them is no longer used. */
    void drop(Iterable<TopicPartition> partitions) {
        partitions.forEach(fetched::remove);
    }

    /** A poll: nothing fetched before it is used after it. */
    void dropAll() {
        fetched.clear();
    }

    /** Requests sent to the coordinator so far. */
    long requests() {
        return requests;
    }

    /** Partitions answered from an earlier request so far. */
    long served() {
        return served;
    }
}
