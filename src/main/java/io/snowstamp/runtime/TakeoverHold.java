package io.snowstamp.runtime;

import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Keeps a task's input paused while its new lease waits out the previous owner's term, so that the wait
 * happens beside the stream thread instead of in it.
 *
 * <p>WHY: a task's first ID waits about a term (1.5 s) after its lease is taken ({@code lease/LeaseGuard}).
 * Kafka Streams hands a stream thread its restored tasks a few at a time, between records of the tasks
 * already running; a task that reached its first record parked the whole thread, with the transaction of
 * the running tasks open, once per handful of tasks. At 1,024 partitions those parks added up past the 5 s
 * transaction timeout: the broker aborted the transaction, the thread was fenced and started every task
 * again (benchmarks.md, "Footprint"). Held back, the tasks wait side by side, the running tasks keep
 * committing, and a task's first record arrives when its lease lets it issue.
 *
 * <p>Safety does not rest on this: {@code LeaseGuard} still checks before every ID and waits if a record
 * comes early. Kafka Streams resumes a task's partitions once its {@code Processor#init} (which takes the
 * lease) has run ({@code TaskManager.transitRestoredTaskToRunning}); this class withholds that resume while
 * the lease waits, and gives it before the next poll once the wait is over, unless Kafka Streams paused the
 * partition itself meanwhile (a full buffer). Kafka Streams never reads {@code paused()}.
 *
 * <p>Following Kafka Streams' pauses and resumes, it also knows which assigned partitions belong to tasks
 * that have not started ({@link #notStarted}: the committed offsets fetched for them in one go).
 *
 * <p>Used by the main consumer's thread only.
 */
final class TakeoverHold {
    private final Predicate<TopicPartition> awaitingTakeover;
    /** Paused by Kafka Streams and not resumed since (restoring tasks, full buffers). */
    private final Set<TopicPartition> pausedByStreams = new HashSet<>();
    /** Resumed by Kafka Streams, kept paused here. */
    private final Set<TopicPartition> held = new HashSet<>();
    /** Resumed by Kafka Streams at least once while assigned: their tasks have started. */
    private final Set<TopicPartition> started = new HashSet<>();
    private long heldTotal;

    /** @param awaitingTakeover whether a partition's task is still waiting out its predecessor's term */
    TakeoverHold(Predicate<TopicPartition> awaitingTakeover) {
        this.awaitingTakeover = awaitingTakeover;
    }

    /** Kafka Streams pauses {@code partitions}. */
    void paused(Collection<TopicPartition> partitions) {
        pausedByStreams.addAll(partitions);
    }

    /**
     * Kafka Streams resumes {@code partitions}.
     *
     * @return those to resume in the consumer now; the others are held
     */
    List<TopicPartition> resumed(Collection<TopicPartition> partitions) {
        List<TopicPartition> now = new ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions) {
            pausedByStreams.remove(tp);
            started.add(tp);
            if (awaitingTakeover.test(tp)) {
                if (held.add(tp)) {
                    heldTotal++;
                }
            } else {
                held.remove(tp);
                now.add(tp);
            }
        }
        return now;
    }

    /**
     * Before each poll: forgets partitions no longer assigned, and returns the held ones whose wait is over
     * and that Kafka Streams wants resumed.
     */
    List<TopicPartition> release(Set<TopicPartition> assigned) {
        pausedByStreams.retainAll(assigned);
        held.retainAll(assigned);
        started.retainAll(assigned);
        List<TopicPartition> now = new ArrayList<>();
        for (Iterator<TopicPartition> it = held.iterator(); it.hasNext(); ) {
            TopicPartition tp = it.next();
            if (!awaitingTakeover.test(tp)) {
                it.remove();
                if (!pausedByStreams.contains(tp)) {
                    now.add(tp);
                }
            }
        }
        return now;
    }

    /**
     * The partitions whose tasks have not started: paused by Kafka Streams and never resumed while assigned (a
     * started task's partition paused for a full buffer is not one of them: its offsets are this instance's to
     * commit, and may have a commit pending).
     */
    Set<TopicPartition> notStarted() {
        Set<TopicPartition> waiting = new HashSet<>(pausedByStreams);
        waiting.removeAll(started);
        return waiting;
    }

    /** Partitions held back so far (each time a task's resume was withheld). */
    long heldTotal() {
        return heldTotal;
    }
}
