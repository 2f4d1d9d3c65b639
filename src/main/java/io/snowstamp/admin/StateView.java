package io.snowstamp.admin;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.runtime.Errors;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.WorkerState;
import io.snowstamp.stream.Names;
import io.snowstamp.resume.ResumeDecision;
import io.snowstamp.stream.TaskStats;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The generator state of every partition, as JSON: this instance's partitions read from its
 * {@code worker-state} store through interactive queries, the other instances' fetched from their
 * admin servers ({@code /state?local=true}), found through Kafka Streams' metadata and their
 * {@code application.server}. Works under both rebalance protocols: with {@code group.protocol=streams}
 * (KIP-1071) the endpoints travel in the streams-group heartbeat.
 */
final class StateView {
    private static final Duration REMOTE_TIMEOUT = Duration.ofSeconds(3);

    private final SnowstampConfig config;
    private final StreamsRunner runner;
    private final LongSupplier clock;
    private final ObjectMapper json;
    private final HttpClient http;
    private volatile HostInfo self;

    StateView(SnowstampConfig config, StreamsRunner runner, LongSupplier clock, ObjectMapper json) {
        this.config = config;
        this.runner = runner;
        this.clock = clock;
        this.json = json;
        this.http = HttpClient.newBuilder().connectTimeout(REMOTE_TIMEOUT)
                .executor(java.util.concurrent.Executors.newCachedThreadPool(AdminServer.daemonThreads("snowstamp-admin-client")))
                .build();
    }

    /** The {@code host:port} this instance advertises as {@code application.server}. */
    void advertisedAs(HostInfo hostInfo) {
        this.self = hostInfo;
    }

    /** @param localOnly only this instance's partitions (what other instances ask for) */
    ObjectNode render(boolean localOnly) {
        long now = clock.getAsLong();
        ObjectNode root = json.createObjectNode();
        root.put("application", config.connection().applicationId());
        root.put("instance", config.connection().instanceId());
        root.put("server", server());
        root.put("streamsState", runner.state().name());
        root.put("at", Instant.ofEpochMilli(now).toString());
        if (!runner.sequenceMode()) {
            // the effective offset: with id.worker-offset=auto, the range the worker registry granted
            root.put("workerOffset", runner.workerOffset());
            root.put("idSpace", config.registry().enabled() ? config.registry().space() : null);
        }
        var lag = runner.leaseReaderLag();
        ObjectNode reader = root.putObject("leaseReader");
        reader.put("leasesHeld", lag.held());
        reader.put("behindPartitions", lag.behind());
        reader.put("lastRoundMs", TimeUnit.NANOSECONDS.toMillis(lag.roundNanos()));
        reader.put("oldestConfirmationMs", TimeUnit.NANOSECONDS.toMillis(lag.oldestConfirmationNanos()));
        ArrayNode partitions = root.putArray("partitions");
        ArrayNode instances = root.putArray("instances");
        ArrayNode notes = json.createArrayNode();
        if (runner.sequenceMode()) {
            // there is no worker state: the numbers live per tag, in the sequence-segments changelog
            notes.add("id.mode=sequence: no worker state; 'snowstamp tags list' shows every tag with its max_id");
            root.set("notes", notes);
            return root;
        }
        ObjectNode me = instances.addObject();
        me.put("instance", config.connection().instanceId());
        me.put("server", root.get("server").asText(null));
        try {
            List<ObjectNode> local = local(now);
            local.forEach(partitions::add);
            me.set("partitions", partitionNumbers(local));
        } catch (RuntimeException e) {
            me.put("error", "cannot query the worker-state store: " + Errors.oneLine(e));
        }
        if (!localOnly) {
            addRemote(partitions, instances, notes);
        }
        List<JsonNode> sorted = new ArrayList<>();
        partitions.forEach(sorted::add);
        sorted.sort(Comparator.comparingInt(node -> node.get("partition").asInt()));
        partitions.removeAll();
        partitions.addAll(sorted);
        if (!notes.isEmpty()) {
            root.set("notes", notes);
        }
        return root;
    }

    /** This instance's active partitions, from its store (interactive query) plus the running task's counters. */
    private List<ObjectNode> local(long now) {
        KafkaStreams streams = runner.streams();
        List<ObjectNode> result = new ArrayList<>();
        if (streams == null) {
            return result;
        }
        ReadOnlyKeyValueStore<Integer, WorkerState> store = streams.store(
                StoreQueryParameters.fromNameAndType(Names.STORE, QueryableStoreTypes.<Integer, WorkerState>keyValueStore()));
        Map<Integer, TaskStats> tasks = runner.stats().tasks();
        try (KeyValueIterator<Integer, WorkerState> all = store.all()) {
            while (all.hasNext()) {
                KeyValue<Integer, WorkerState> entry = all.next();
                result.add(partition(entry.key, entry.value, tasks.get(entry.key), now));
            }
        }
        return result;
    }

    private ObjectNode partition(int partition, WorkerState state, TaskStats task, long now) {
        IdLayout layout = config.ids().layout();
        // the running task knows IDs issued since the last state write; the store lags by up to a reservation
        long newest = task != null && task.lastId() > state.lastId() ? task.lastId() : state.lastId();
        long leadMillis = task != null && task.issued() > 0 ? task.leadMillis(now)
                : newest < 0 ? 0 : layout.decode(newest).wallMillis() - now;
        long reserved = state.reservedUntil();
        Reservation reservation = new Reservation(reserved, reserved < 0 ? null : instant(layout.decode(reserved).wallMillis()),
                reserved < 0 ? 0 : layout.decode(reserved).wallMillis() - now);
        PartitionJson view = new PartitionJson(partition, state.workerId(), config.connection().instanceId(), server(), state.epoch(),
                state.holder(), instant(state.acquiredAt()), instant(state.heartbeatAt()), state.lastId(),
                state.lastId() < 0 ? null : Decoded.of(layout.decode(state.lastId())), newest, leadMillis, reservation,
                // a stall is visible here: how long the partition has not stamped, and whether its instance is rebalancing
                runner.state() == KafkaStreams.State.REBALANCING, task == null ? null : Task.of(task, now));
        return json.valueToTree(view);
    }

    private String server() {
        return self == null ? null : self.host() + ":" + self.port();
    }

    /**
     * One partition of {@code /state}, serialised by Jackson in component order (times ISO-8601, null
     * when never set); the running task's counters only while this instance runs the task.
     */
    private record PartitionJson(int partition, long worker, String instance, String server, long epoch, String holder,
                                 String acquiredAt, String heartbeatAt, long lastId, Decoded lastIdDecoded, long newestId,
                                 long leadMillis, Reservation reservation, boolean rebalancing, @JsonUnwrapped Task task) {
    }

    private record Decoded(String time, long datacenter, long worker, long sequence) {
        static Decoded of(DecodedId d) {
            return new Decoded(d.instant().toString(), d.datacenter(), d.worker(), d.sequence());
        }
    }

    private record Reservation(long reservedUntil, String until, long aheadMillis) {
    }

    private record Task(long issuedSinceTaskStart, String lastStampedAt, long millisSinceLastStamp,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Resume resume) {
        static Task of(TaskStats task, long now) {
            ResumeDecision resume = task.resume();
            return new Task(task.issued(), instant(task.lastStampedAtMillis()), task.millisSinceLastStamp(now),
                    resume == null ? null : new Resume(resume.source(), resume.resumeAbove(), resume.tail().millis()));
        }
    }

    private record Resume(String source, long above, long tailGuardMillis) {
    }

    private static String instant(long millis) {
        return millis <= 0 ? null : Instant.ofEpochMilli(millis).toString();
    }

    private ArrayNode partitionNumbers(List<ObjectNode> nodes) {
        ArrayNode numbers = json.createArrayNode();
        nodes.forEach(node -> numbers.add(node.get("partition").asInt()));
        return numbers;
    }

    /** The other instances, through Kafka Streams' metadata and their own admin servers. */
    private void addRemote(ArrayNode partitions, ArrayNode instances, ArrayNode notes) {
        KafkaStreams streams = runner.streams();
        if (streams == null || runner.state() == KafkaStreams.State.CREATED) {
            notes.add("Kafka Streams has not started: only this instance is shown");
            return;
        }
        if (self == null) {
            notes.add("this instance advertises no application.server: other instances cannot be found");
        }
        Collection<StreamsMetadata> clients;
        try {
            clients = streams.streamsMetadataForStore(Names.STORE);
        } catch (RuntimeException e) {
            notes.add("Kafka Streams metadata unavailable (" + Errors.oneLine(e) + "): only this instance is shown");
            return;
        }
        if (clients.isEmpty()) {
            notes.add("Kafka Streams has no metadata of instances yet (rebalancing, or no instance advertises"
                    + " application.server): only this instance is shown");
        }
        for (StreamsMetadata client : clients) {
            HostInfo host = client.hostInfo();
            if (host.equals(self) || host.port() < 0) {
                continue;
            }
            ObjectNode instance = instances.addObject();
            instance.put("server", host.host() + ":" + host.port());
            ArrayNode assigned = instance.putArray("assigned");
            client.topicPartitions().stream().filter(tp -> tp.topic().equals(config.topics().input()))
                    .mapToInt(tp -> tp.partition()).sorted().forEach(assigned::add);
            try {
                JsonNode remote = fetch(host);
                instance.put("instance", remote.path("instance").asText(null));
                ArrayNode numbers = json.createArrayNode();
                for (JsonNode partition : remote.path("partitions")) {
                    if (partition instanceof ObjectNode object) {
                        object.put("server", host.host() + ":" + host.port());
                        partitions.add(object);
                        numbers.add(object.path("partition").asInt());
                    }
                }
                instance.set("partitions", numbers);
            } catch (Exception e) {
                instance.put("error", "cannot read its /state: " + Errors.oneLine(e));
            }
        }
    }

    private JsonNode fetch(HostInfo host) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + host.host() + ":" + host.port() + "/state?local=true"))
                .timeout(REMOTE_TIMEOUT).GET().build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + response.statusCode());
        }
        return json.readTree(response.body());
    }
}
