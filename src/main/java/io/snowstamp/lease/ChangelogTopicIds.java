package io.snowstamp.lease;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.WakeupException;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Which incarnation of its changelog topic each held lease is read in, by topic ID, asked every round. A job of its own
 * because a changelog deleted and created again under the same name looks to the reader like the same partition: its
 * position, past the new log's end, reads as "read to the end", and a holder in the new log starts its epochs again at 1,
 * below this holder's, so it never counts as a newer lease. The lease's own record, and every record it rests on, are
 * gone with the old log: a lease whose topic changed is lost for good ({@link PartitionLease#replaced}); one whose topic is
 * gone gets no confirmation, and its task stops issuing when its term runs out.
 *
 * <p>WHY asked after the round's send and before its reads: a confirmation says that nothing newer was in the log when
 * the round was sent. A topic created again before the ask shows here (lost); one created after it, after the send too,
 * so its new holder's takeover wait outlasts this round's term, and the next round shows it. Verifier thread only.
 */
final class ChangelogTopicIds {
    /** What a round learned of one held partition. */
    enum Seen {
        /** the topic this lease has been read in */
        SAME,
        /** a newly followed lease: its topic ID is noted now, and its reading may start */
        NOTED,
        /**
         * no answer in time, or no such topic (deleted; or created a moment ago, and the broker asked does not know it yet):
         * not confirmed this round, and a newly followed lease is not read yet
         */
        UNANSWERED,
        /** another topic of the same name: the lease is lost */
        REPLACED
    }

    private record Noted(PartitionLease lease, Uuid id) {
    }

    private final Map<TopicPartition, Noted> readIn = new HashMap<>();

    /** Asks the ID of every held partition's topic (one request), answered to {@link #check}. */
    static DescribeTopicsResult ask(Admin admin, Set<TopicPartition> held) {
        Set<String> topics = new HashSet<>();
        held.forEach(tp -> topics.add(tp.topic()));
        return admin.describeTopics(topics, new DescribeTopicsOptions().timeoutMs((int) LeaseVerifier.TERM.toMillis()));
    }

    /**
     * Compares each held partition's topic ID, as {@code asked}, with the one its lease has been read in.
     *
     * @param deadline {@link System#nanoTime()} after which an unanswered topic counts as {@link Seen#UNANSWERED}
     * @throws WakeupException when the calling thread is interrupted (its interrupt flag set again)
     */
    Map<TopicPartition, Seen> check(DescribeTopicsResult asked, Map<TopicPartition, PartitionLease> leases, long deadline) {
        Map<String, Uuid> ids = new HashMap<>();
        asked.topicNameValues().forEach((topic, answer) -> ids.put(topic, idOf(answer, deadline)));
        readIn.keySet().retainAll(leases.keySet());
        Map<TopicPartition, Seen> seen = new HashMap<>();
        leases.forEach((tp, lease) -> {
            Uuid id = ids.get(tp.topic());
            Noted noted = readIn.get(tp);
            boolean fresh = noted == null || noted.lease() != lease;
            if (id == null) {
                seen.put(tp, Seen.UNANSWERED);
            } else if (!fresh && !id.equals(noted.id())) {
                seen.put(tp, Seen.REPLACED);
            } else if (fresh) {
                readIn.put(tp, new Noted(lease, id));
                seen.put(tp, Seen.NOTED);
            } else {
                seen.put(tp, Seen.SAME);
            }
        });
        return seen;
    }

    /** The topic's ID; null when the topic does not exist or no answer came in time. */
    private static Uuid idOf(KafkaFuture<TopicDescription> answer, long deadline) {
        if (answer == null) {
            return null;
        }
        try {
            return answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS).topicId();
        } catch (ExecutionException | TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WakeupException();
        }
    }
}
