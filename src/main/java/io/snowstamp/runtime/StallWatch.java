package io.snowstamp.runtime;

import io.snowstamp.stream.StamperStats;
import io.snowstamp.stream.TaskStats;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Watches for held partitions that stop stamping while their input waits ({@link StallDetector}: slow is not stuck),
 * says so in one WARN line with what it sees, shows it in {@code /health} and the metrics
 * ({@link io.snowstamp.stream.Stalls}), and restarts the stream threads ({@code restart}) instead of waiting forever: a
 * new thread has a new consumer, producer and transaction, and rejoins the group. Restarts are paced
 * ({@link RestartPacing}: {@code stallAfter}, then twice as long after each restart that did not cure the stall, up to
 * {@link #MAX_GAP_FACTOR} times); the line again once a minute while the stall lasts. Reads Kafka from its own daemon
 * thread: the input's end offsets and the group's committed offsets of the partitions held here, every quarter of
 * {@code stallAfter} (at most every 10 s). Snowflake mode (the tasks' stats).
 */
final class StallWatch implements AutoCloseable {
    /** The longest its client's close takes: part of a clean stop's worst case (the Kubernetes grace period counts it). */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final Logger log = LoggerFactory.getLogger(StallWatch.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** The longest pause between two restarts, in multiples of {@code stallAfter}. */
    static final int MAX_GAP_FACTOR = 16;

    private final Admin admin;
    private final String group;
    private final String input;
    private final StamperStats stats;
    private final UndeliveredTails undelivered;
    private final java.util.function.BooleanSupplier running;
    private final Runnable restart;
    private final StallDetector detector;
    private final RestartPacing pacing;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "snowstamp-stall-watch");
        t.setDaemon(true);
        return t;
    });
    private long lastLog = System.nanoTime() - LOG_EVERY_NANOS;
    private long lastFailureLog = System.nanoTime() - LOG_EVERY_NANOS;

    /**
     * @param client  connection settings of the input's cluster
     * @param running whether Kafka Streams is RUNNING (a stall counts only then)
     * @param restart restarts the stream threads (returns once done; throws when it could not)
     */
    StallWatch(Properties client, String group, String input, StamperStats stats, UndeliveredTails undelivered, Duration stallAfter,
               java.util.function.BooleanSupplier running, Runnable restart) {
        this.undelivered = undelivered;
        Properties props = new Properties();
        props.putAll(client);
        props.put("client.id", group + "-stall-watch");
        this.admin = Admin.create(props);
        this.group = group;
        this.input = input;
        this.stats = stats;
        this.running = running;
        this.restart = restart;
        this.detector = new StallDetector(stallAfter.toNanos());
        this.pacing = pacing(stallAfter);
        long period = Math.max(100, Math.min(10_000, stallAfter.toMillis() / 4));
        thread.scheduleWithFixedDelay(this::checkSafely, period, period, TimeUnit.MILLISECONDS);
    }

    /** The pacing of the restarts: {@code stallAfter} first, doubled after each, up to {@link #MAX_GAP_FACTOR} times it. */
    static RestartPacing pacing(Duration stallAfter) {
        return new RestartPacing(stallAfter.toNanos(), stallAfter.toNanos() * MAX_GAP_FACTOR);
    }

    private void checkSafely() {
        try {
            check();
        } catch (Exception e) {
            long now = System.nanoTime();
            if (now - lastFailureLog >= LOG_EVERY_NANOS) {
                lastFailureLog = now;
                log.info("stall watch: cannot read the input's offsets now ({}); retrying", Errors.oneLine(e));
            }
        }
    }

    /** The input's offsets of {@code partitions} as {@code spec} names them (read_committed: the end is the stable end). */
    private Map<Integer, Long> offsets(Set<Integer> partitions, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        partitions.forEach(p -> specs.put(new TopicPartition(input, p), spec));
        Map<Integer, Long> offsets = new HashMap<>();
        admin.listOffsets(specs, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(30, TimeUnit.SECONDS)
                .forEach((tp, info) -> offsets.put(tp.partition(), info.offset()));
        return offsets;
    }

    private void check() throws Exception {
        Map<Integer, TaskStats> held = stats.tasks();
        if (held.isEmpty() || stats.schemaRegistry().waitingSince() >= 0) {
            // nothing held, or the tasks wait for the schema registry (shown and logged as that)
            detector.observe(System.nanoTime(), false, Map.of());
            // the stall cleared before its figures: a reader that sees a stall finds its partitions' figures
            stats.stalls().seen(Set.of(), System.currentTimeMillis(), "");
            stats.stalls().waiting(Map.of());
            stats.stalls().stuck(Map.of());
            pacing.restartNow(System.nanoTime(), false);
            return;
        }
        Map<Integer, Long> ends = offsets(held.keySet(), OffsetSpec.latest());
        Map<Integer, Long> starts = offsets(held.keySet(), OffsetSpec.earliest());
        Map<Integer, Long> committed = new HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
        offsets.forEach((tp, offset) -> {
            if (tp.topic().equals(input) && offset != null) {
                committed.put(tp.partition(), offset.offset());
            }
        });
        Map<Integer, StallDetector.Look> looks = new HashMap<>();
        held.forEach((partition, task) -> looks.put(partition, new StallDetector.Look(task, task.issued(), task.leaseConfirmed(),
                committed.getOrDefault(partition, -1L), ends.getOrDefault(partition, -1L), starts.getOrDefault(partition, 0L),
                undelivered.readWithoutRecord(new TopicPartition(input, partition), ends.getOrDefault(partition, -1L)))));
        Map<Integer, Long> waiting = new HashMap<>();
        looks.forEach((partition, look) -> waiting.put(partition, look.inputWaiting() ? look.end() - look.firstUnread() : 0));
        stats.stalls().waiting(waiting);
        long now = System.nanoTime();
        Set<Integer> stalled = detector.observe(now, running.getAsBoolean(), looks);
        Map<Integer, Long> stuck = new HashMap<>();
        looks.keySet().forEach(partition -> stuck.put(partition, TimeUnit.NANOSECONDS.toMillis(detector.stillNanos(partition, now))));
        stats.stalls().stuck(stuck);
        String detail = "";
        if (!stalled.isEmpty()) {
            int first = stalled.iterator().next();
            long at = looks.get(first).firstUnread();
            detail = stalled.size() + " of " + held.size() + " partitions held here have input waiting and issued no ID for "
                    + TimeUnit.NANOSECONDS.toSeconds(detector.stillNanos(first, now)) + " s, e.g. partition " + first + ": " + (ends.get(first) - at) + " records past the committed offset " + at + ", "
                    + looks.get(first).issued() + " IDs issued by its task";
        }
        stats.stalls().seen(stalled, System.currentTimeMillis(), detail);
        boolean restartNow = pacing.restartNow(now, !stalled.isEmpty());
        if (stalled.isEmpty()) {
            return;
        }
        if (restartNow || now - lastLog >= LOG_EVERY_NANOS) {
            lastLog = now;
            log.atWarn().addKeyValue("event", "stalled").addKeyValue("partitions", stalled)
                    .log("stalled: {} (partitions {}){}", detail, stalled, restartNow ? "; restarting the stream threads"
                            : "; next restart no sooner than " + TimeUnit.NANOSECONDS.toSeconds(pacing.gapNanos())
                            + " s after the last");
        }
        if (restartNow) {
            stats.stalls().restarted();
            restart.run();
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        admin.close(CLOSE_TIMEOUT);
    }
}
