package io.snowstamp.admin;

import io.snowstamp.runtime.Errors;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.stream.SchemaRegistryWait;
import io.snowstamp.stream.Stalls;
import io.snowstamp.stream.TaskStats;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.ThreadMetadata;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Liveness and readiness of one stamper instance, read from the same {@link StreamsRunner} state
 * that {@code run} waits on. Thread-safe: every call reads fresh state.
 */
final class Health {
    private final StreamsRunner runner;

    Health(StreamsRunner runner) {
        this.runner = runner;
    }

    /**
     * An answer to a probe.
     *
     * @param ok   HTTP 200 when true, 503 otherwise
     * @param body what the endpoint returns as JSON
     */
    record Check(boolean ok, Map<String, Object> body) {
    }

    /** Up unless Kafka Streams died (ERROR, or a failure that stops the client). */
    Check live() {
        KafkaStreams.State state = runner.state();
        Throwable failure = runner.failure();
        Map<String, Object> body = new LinkedHashMap<>();
        boolean dead = failure != null || state == KafkaStreams.State.ERROR || state == KafkaStreams.State.PENDING_ERROR;
        body.put("status", dead ? "down" : "up");
        body.put("state", state.name());
        if (failure != null) {
            body.put("reason", Errors.oneLine(failure));
        } else if (dead) {
            body.put("reason", "Kafka Streams is " + state);
        }
        return new Check(!dead, body);
    }

    /**
     * Ready when Kafka Streams is RUNNING and every active task assigned to this instance has
     * restored its state, finished {@code init} (it published its resume decision) and holds its lease (read back, and
     * past the previous owner's term: until then it issues nothing). An instance
     * with no task (more instances than partitions) is ready: it is a healthy spare. In sequence
     * mode ({@code id.mode=sequence}): ready when Kafka Streams is RUNNING. Not ready while a task waits for the
     * schema registry (Avro and Protobuf values of a schema the registry has not answered for yet), nor while partitions
     * held here are stalled (input waiting, nothing issued for {@code recovery.stall-after}).
     */
    Check ready() {
        KafkaStreams.State state = runner.state();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("state", state.name());
        if (runner.stats().isStopping() && state == KafkaStreams.State.RUNNING) {
            // the clean stop writes the last IDs first (up to 5 s) while Kafka Streams still runs: drain it now
            body.put("status", "not-ready");
            body.put("reason", "stopping");
            return new Check(false, body);
        }
        if (state != KafkaStreams.State.RUNNING) {
            body.put("status", "not-ready");
            body.put("reason", runner.failure() != null ? Errors.oneLine(runner.failure())
                    : "Kafka Streams is " + state + ", not RUNNING");
            return new Check(false, body);
        }
        if (runner.sequenceMode()) {
            // sequence tasks publish no per-task stats; Kafka Streams is RUNNING only once its active
            // tasks have restored and initialized
            body.put("status", "ready");
            return new Check(true, body);
        }
        SchemaRegistryWait registry = runner.stats().schemaRegistry();
        long waitingSince = registry.waitingSince();
        if (waitingSince >= 0) {
            // not a failure of this instance (live stays up), but it stamps nothing new until the registry answers
            body.put("status", "not-ready");
            body.put("reason", "waiting for the schema registry since " + java.time.Instant.ofEpochMilli(waitingSince)
                    + " (" + registry.reason() + ")");
            return new Check(false, body);
        }
        Set<Integer> assigned = new TreeSet<>();
        for (ThreadMetadata thread : runner.streams().metadataForLocalThreads()) {
            thread.activeTasks().forEach(task -> assigned.add(task.taskId().partition()));
        }
        Map<Integer, TaskStats> tasks = runner.stats().tasks();
        Set<Integer> waiting = new TreeSet<>();
        Set<Integer> notReadBack = new TreeSet<>();
        Set<Integer> takeovers = new TreeSet<>();
        for (int partition : assigned) {
            TaskStats task = tasks.get(partition);
            if (task == null || task.resume() == null) {
                waiting.add(partition);
            } else if (!task.leaseConfirmed()) {
                // started, but its lease record not yet read back from the changelog: it issues nothing
                notReadBack.add(partition);
            } else if (runner.awaitingLease(partition)) {
                // read back, but still waiting out the previous owner's term: it issues nothing
                takeovers.add(partition);
            }
        }
        body.put("partitions", assigned);
        if (!waiting.isEmpty()) {
            body.put("status", "not-ready");
            body.put("reason", "partitions " + waiting + " have not finished restore and init");
            return new Check(false, body);
        }
        Stalls stalls = runner.stats().stalls();
        Set<Integer> stalled = stalls.stalled();
        if (!stalled.isEmpty()) {
            // live stays up: the stall watch restarts the stream threads (recovery.stall-after)
            body.put("status", "not-ready");
            body.put("stalledPartitions", stalled);
            body.put("reason", "stalled since " + java.time.Instant.ofEpochMilli(stalls.since()) + ": " + stalls.detail()
                    + "; stream threads restarted " + stalls.restarts() + " times");
            return new Check(false, body);
        }
        // after the stall check: a stalled partition's replaced thread takes its lease again, and the stall is the news
        if (!notReadBack.isEmpty() || !takeovers.isEmpty()) {
            List<String> reasons = new ArrayList<>();
            if (!notReadBack.isEmpty()) {
                reasons.add("partitions " + notReadBack + " wait for their lease (not read back yet)");
            }
            if (!takeovers.isEmpty()) {
                reasons.add("partitions " + takeovers + " wait for their lease (the previous owner's term)");
            }
            body.put("status", "not-ready");
            body.put("reason", String.join("; ", reasons));
            return new Check(false, body);
        }
        body.put("status", "ready");
        return new Check(true, body);
    }
}
