package io.snowstamp.lease;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
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
 * Whether each held lease is still read in the log it was first read in. A job of its own because a changelog deleted and
 * created again under the same name (or a log cut below what was read) looks to the reader like the same partition: its
 * position reads as "read to the end", and a holder in the new log starts its epochs again at 1, below this holder's, so
 * it never counts as a newer lease. The lease's own record, and every record it rests on, are gone with the old log.
 *
 * <p>Signs of another log, each losing the lease for good ({@link PartitionLease#replaced}): another topic ID under the
 * changelog's name (asked every round, after its send); an offset read twice; the reader's position moving down without a
 * seek of its own (reset to the start, out of range); the committed end or its leader epoch moving down (neither does in
 * one log: KIP-207, KIP-320). The topic ID is the sign a reader that was frozen through the whole change still sees; the
 * others come from the partition's leader, not from a broker's metadata cache. A topic not answered (or not known to the
 * broker asked: deleted, or created a moment ago) withholds the round's confirmation; a new lease is not read before its
 * topic's ID is noted. Verifier thread only.
 *
 * <p>WHY the ID asked after the round's send suffices: a confirmation says that nothing newer was in the log when the round
 * was sent. A topic created again before the ask shows (lost); one created after it came after the send too, so its new
 * holder's takeover wait outlasts this round's term, and the next round shows it.
 */
final class ChangelogIdentity {
    /** What a round learned of one held partition's topic. */
    enum Seen {
        /** the topic this lease has been read in */
        SAME,
        /** a newly followed lease: its topic ID is noted now, and its reading may start */
        NOTED,
        /** no answer in time, or no such topic: not confirmed this round, and a newly followed lease is not read yet */
        UNANSWERED,
        /** another topic of the same name: the lease is lost */
        REPLACED
    }

    private record Noted(PartitionLease lease, Uuid id) {
    }

    /** What the reader saw of one partition's log so far: the last offset read, position, committed end, leader epoch. */
    private static final class Track {
        long offset = -1;
        long position = -1;
        long end = -1;
        int leaderEpoch = -1;
    }

    private final Map<TopicPartition, Noted> readIn = new HashMap<>();
    private final Map<TopicPartition, Track> tracks = new HashMap<>();

    /** Asks the ID of every held partition's topic (one request), answered to {@link #check}. */
    static DescribeTopicsResult ask(Admin admin, Set<TopicPartition> held) {
        Set<String> topics = new HashSet<>();
        held.forEach(tp -> topics.add(tp.topic()));
        return admin.describeTopics(topics, new DescribeTopicsOptions().timeoutMs((int) LeaseVerifier.TERM.toMillis()));
    }

    /** Whether a lease in {@code leases} has no topic ID noted yet: its reading waits for {@link #check}. */
    boolean anyNew(Map<TopicPartition, PartitionLease> leases) {
        for (Map.Entry<TopicPartition, PartitionLease> entry : leases.entrySet()) {
            Noted noted = readIn.get(entry.getKey());
            if (noted == null || noted.lease() != entry.getValue()) {
                return true;
            }
        }
        return false;
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

    /** The reader follows {@code followed}, from the start for {@code fresh}: what was seen of those logs is forgotten. */
    void follow(Set<TopicPartition> followed, Set<TopicPartition> fresh) {
        tracks.keySet().retainAll(followed);
        tracks.keySet().removeAll(fresh);
    }

    /** A record read at {@code offset}; why its log is another one (an offset read twice), else null. */
    String read(TopicPartition tp, long offset) {
        Track track = track(tp);
        long last = track.offset;
        track.offset = offset;
        return offset <= last ? "offset " + offset + " read twice" : null;
    }

    /** The reader's position now; why its log is another one (it moved down: reset to the start), else null. */
    String positioned(TopicPartition tp, long position) {
        Track track = track(tp);
        long last = track.position;
        track.position = position;
        return position < last ? "the reader's position moved down from " + last + " to " + position : null;
    }

    /** The committed end the partition's leader answered; why its log is another one (end or leader epoch down), else null. */
    String ended(TopicPartition tp, ListOffsetsResultInfo end) {
        Track track = track(tp);
        int epoch = end.leaderEpoch().orElse(-1);
        String why = end.offset() < track.end ? "its committed end moved down from " + track.end + " to " + end.offset()
                : epoch >= 0 && epoch < track.leaderEpoch ? "its leader epoch moved down from " + track.leaderEpoch + " to " + epoch
                : null;
        track.end = Math.max(track.end, end.offset());
        track.leaderEpoch = Math.max(track.leaderEpoch, epoch);
        return why;
    }

    private Track track(TopicPartition tp) {
        return tracks.computeIfAbsent(tp, key -> new Track());
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
