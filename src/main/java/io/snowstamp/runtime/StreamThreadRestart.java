package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.stream.StamperStats;
import io.snowstamp.stream.TaskStats;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The stall watch's restart ({@link StallWatch}'s {@code restart}) applied to the live Kafka Streams instance: every
 * stream thread replaced through {@link ThreadReplacement}, which decides slow or stuck. Apart from
 * {@link StreamsRunner} because it is one reaction to one event; the runner only says how a stuck instance stops.
 */
final class StreamThreadRestart implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(StreamThreadRestart.class);

    private final Supplier<KafkaStreams> streams;
    private final StamperStats stats;
    private final Consumer<SnowstampException> stuck;

    /**
     * @param streams the instance running now (null: none)
     * @param stats   what the tasks issued, the measure of progress
     * @param stuck   told when a replaced thread did not stop and no task progressed: stops the stamper (any thread)
     */
    StreamThreadRestart(Supplier<KafkaStreams> streams, StamperStats stats, Consumer<SnowstampException> stuck) {
        this.streams = streams;
        this.stats = stats;
        this.stuck = stuck;
    }

    /**
     * Replaces every stream thread with a new one (a new consumer, producer and transaction; it rejoins the group): what
     * the stall watch does when held partitions stop stamping with input waiting. A new thread first, then the oldest
     * goes ({@code removeStreamThread} takes the first alive one), so the instance never holds no thread. A thread that
     * does not stop within a minute stops the stamper (exit 1, to be started again) only if no task of the instance
     * issued an ID meanwhile: while any makes progress, the instance is slow, not stuck, and keeps running.
     */
    @Override
    public void run() {
        KafkaStreams current = streams.get();
        if (current == null || current.state() != KafkaStreams.State.RUNNING && current.state() != KafkaStreams.State.REBALANCING) {
            return;
        }
        ThreadReplacement.Threads threads = new ThreadReplacement.Threads() {
            @Override
            public int count() {
                return current.metadataForLocalThreads().size();
            }

            @Override
            public Optional<String> add() {
                return current.addStreamThread();
            }

            @Override
            public Optional<String> remove(Duration timeout) {
                return current.removeStreamThread(timeout);
            }
        };
        react(ThreadReplacement.replaceAll(threads, this::issuedByRunningTasks, Duration.ofMinutes(1),
                (removed, added) -> log.warn("stream thread {} replaced by {}", removed, added)));
    }

    /** What a replacement's outcome does: a stuck instance stops (exit 1, to be started again), a slow one keeps running. */
    void react(ThreadReplacement.Outcome outcome) {
        if (outcome == ThreadReplacement.Outcome.SLOW) {
            log.warn("a stalled stream thread did not stop within a minute of being replaced; the instance keeps"
                    + " running: its tasks made progress meanwhile (IDs issued, tasks started or closed)");
        } else if (outcome == ThreadReplacement.Outcome.STUCK) {
            stuck.accept(new SnowstampException("a stalled stream thread did not stop within a minute of"
                    + " being replaced and no task of this instance issued an ID meanwhile; stopping the stamper so that"
                    + " it can be started again"));
        }
    }

    /** The tasks running now and what each issued: any difference between two of these is progress. */
    private Map<TaskStats, Long> issuedByRunningTasks() {
        Map<TaskStats, Long> issued = new IdentityHashMap<>();
        stats.tasks().values().forEach(task -> issued.put(task, task.issued()));
        return issued;
    }
}
