package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The changelog tells the truth, on a real broker with the stamper in a child JVM stopped by
 * SIGTERM as an operator stops it: after a clean stop each partition's {@code lastId} is exactly
 * the last ID in its output partition, in both processing modes ({@code changelog inspect} and the
 * last record of {@code changelog history}), and while it runs the changelog is a high-water mark —
 * {@code lastId} a lower bound that never goes backwards, {@code reservedUntil} at least the last
 * ID; the new lease is in the
 * changelog as soon as the task starts; every state says when its writer wrote it, not when the
 * input record it was processing was produced; and {@code import --dry-run} works while the
 * application runs, calling unchanged what would not change.
 *
 * <p>The bad timings are forced, not hoped for: {@code lease.heartbeat=10m}, so the heartbeat
 * (which used to be the only writer of {@code lastId} between reservations) never runs; all records
 * arrive within one reservation window, so the reservation write alone leaves {@code lastId} behind;
 * under exactly-once the stamper is stopped right after its last records were committed, so no task
 * has anything left for Kafka Streams' last commit to flush;
 * the lease is checked before any input record exists (so no record, and no heartbeat, triggers a
 * commit; under exactly-once nothing else flushes the store either); the input records carry
 * timestamps an hour old.
 */
@Tag("integration")
@Timeout(300)
class AuditTrailIT extends OnSharedBroker {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int PARTITIONS = 2;
    private static final int RECORDS = 400;
    private static final long HOUR = 3_600_000;
    @TempDir
    Path work;

    @Test
    void shouldCommitTheLeaseAtOnceDateEveryWriteAndKeepTheExactLastIdUnderAtLeastOnce() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        String app = TestBroker.unique("audit-alos");
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), app, topics, "a1")
                .with("processing.guarantee", "at_least_once").with("lease.heartbeat", "10m");
        long started = System.currentTimeMillis();
        try (ChildJvm child = stamper.start()) {
            assertLeasesCommittedWithoutARecord(child, app, topics);
            produce(topics.in(), System.currentTimeMillis() - HOUR);
            highestPerPartition(topics.out(), RECORDS);
            assertThat(child.terminate(60)).as(child.logs()).isIn(0, 143);
        }
        long stopped = System.currentTimeMillis();
        Map<Integer, Long> lastIds = assertExactLastIds(app, topics, RECORDS);
        assertHistoryEndsAtTheLastIds(app, topics, lastIds);

        List<JsonNode> history = json(cli(topics, "changelog", "history", "--application-id", app, "--format", "json"));
        assertThat(history).isNotEmpty().allSatisfy(record -> assertThat(record.get("writtenAt").asLong())
                .as("written by the stamper between its start and its stop: %s", record).isBetween(started - 1000, stopped + 1000));
    }

    @Test
    void shouldKeepTheChangelogAHighWaterMarkUnderExactlyOnceAndDryRunAnImportWhileRunning() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        String app = TestBroker.unique("audit-eos");
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), app, topics, "e1").with("lease.heartbeat", "10m");
        try (ChildJvm child = stamper.start()) {
            // under exactly-once nothing else would commit the lease: no record, no punctuation, no checkpoint
            assertLeasesCommittedWithoutARecord(child, app, topics);
            produce(topics.in(), System.currentTimeMillis());
            Map<Integer, Long> highest = highestPerPartition(topics.out(), RECORDS);
            // the running application's changelog is a high-water mark: each ID issued is covered by the reservation
            // written in its transaction before it (its commits write no lastId: the output tail decides a resume)
            awaitInspect(app, topics, states -> states.size() == PARTITIONS && states.stream().allMatch(s -> s.get("reservedUntil").asLong()
                    >= highest.get(s.get("partition").asInt())), Duration.ofSeconds(30));
            awaitInspect(app, topics, unchangedFor(Duration.ofSeconds(2)), Duration.ofSeconds(60));

            Path export = work.resolve("running.jsonl");
            Cli.Result exported = cli(topics, "changelog", "export", "--application-id", app, "--file", export.toString());
            assertThat(exported.exitCode()).as(exported.toString()).isZero();
            Cli.Result dryRun = cli(topics, "changelog", "import", "--application-id", app, "--file", export.toString(), "--dry-run");
            assertThat(dryRun.exitCode()).as(dryRun.toString()).isZero();
            assertThat(dryRun.outLines()).as(dryRun.toString())
                    .anyMatch(line -> line.matches(" +0 +0 +unchanged .*")).anyMatch(line -> line.matches(" +1 +1 +unchanged .*"))
                    .anyMatch(line -> line.startsWith("dry run: application " + app + " is running (1 active member)"))
                    .contains("nothing to write: " + io.snowstamp.stream.Names.changelogTopic(app) + " already holds this state");
            Cli.Result real = cli(topics, "changelog", "import", "--application-id", app, "--file", export.toString());
            assertThat(real.exitCode()).as("a real import is still refused while the application runs").isEqualTo(1);

            produce(topics.in(), System.currentTimeMillis());
            assertThat(highestPerPartition(topics.out(), 2 * RECORDS)).isNotEmpty();
            // stopped right after its last records: no heartbeat (10m), and the commit of those records wrote no lastId,
            // so only the stop itself can write the exact one (Kafka Streams' last commit flushes none of the idle tasks)
            assertThat(child.terminate(60)).as(child.logs()).isIn(0, 143);
        }
        assertHighWaterMarks(app, topics, 2 * RECORDS);
        Map<Integer, Long> lastIds = assertExactLastIds(app, topics, 2 * RECORDS);
        assertHistoryEndsAtTheLastIds(app, topics, lastIds);
    }

    /**
     * {@code changelog history} agrees with {@code inspect}: each partition's last record names the last ID issued, and
     * no record of it names a lower {@code lastId} than one before it (a lower bound that never goes backwards).
     */
    private void assertHistoryEndsAtTheLastIds(String app, Stamper.Topics topics, Map<Integer, Long> lastIds) throws Exception {
        List<JsonNode> history = json(cli(topics, "changelog", "history", "--application-id", app, "--format", "json"));
        Map<Integer, Long> last = new TreeMap<>();
        for (JsonNode record : history) {
            int partition = record.get("partition").asInt();
            long lastId = record.get("lastId").asLong();
            assertThat(lastId).as("lastId never goes backwards: %s after %s", record, last.get(partition))
                    .isGreaterThanOrEqualTo(last.getOrDefault(partition, -1L));
            assertThat(record.get("changes").toString()).as("%s", record).doesNotContain("BACK", "back");
            last.put(partition, lastId);
        }
        assertThat(last).as("the last lastId of every partition in changelog history").isEqualTo(lastIds);
    }

    /** After the stop, per partition: lastId <= the highest ID in the output partition <= reservedUntil. */
    private void assertHighWaterMarks(String app, Stamper.Topics topics, int stamped) throws Exception {
        Map<Integer, Long> highest = highestPerPartition(topics.out(), stamped);
        List<JsonNode> states = json(cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json"));
        assertThat(states).hasSize(PARTITIONS).allSatisfy(state -> {
            long last = highest.get(state.get("partition").asInt());
            assertThat(state.get("lastId").asLong()).as("lastId: what the last write saw %s", state).isLessThanOrEqualTo(last);
            assertThat(state.get("reservedUntil").asLong()).as("the high-water mark %s", state).isGreaterThanOrEqualTo(last);
        });
    }

    /** Every partition's new lease reaches the changelog soon after its task started, before any input record exists. */
    private static void assertLeasesCommittedWithoutARecord(ChildJvm child, String app, Stamper.Topics topics) throws Exception {
        for (int p = 0; p < PARTITIONS; p++) {
            child.awaitLog("partition " + p + " worker " + p + ": lease epoch 1 taken", 120);
        }
        List<JsonNode> leases = awaitInspect(app, topics, states -> states.size() == PARTITIONS, Duration.ofSeconds(15));
        assertThat(leases).as("the lease of every partition, committed at task start").hasSize(PARTITIONS)
                .allSatisfy(state -> assertThat(state.get("epoch").asLong()).isEqualTo(1));
    }

    /** After the stop: per partition, the changelog's lastId is the highest ID of all {@code stamped} records in the output partition. */
    private Map<Integer, Long> assertExactLastIds(String app, Stamper.Topics topics, int stamped) throws Exception {
        Map<Integer, Long> highest = highestPerPartition(topics.out(), stamped);
        List<JsonNode> states = json(cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json"));
        Map<Integer, Long> lastIds = new TreeMap<>();
        states.forEach(state -> lastIds.put(state.get("partition").asInt(), state.get("lastId").asLong()));
        System.out.printf("%s: highest ID per output partition %s, changelog lastId %s%n", app, highest, lastIds);
        assertThat(lastIds).as("changelog lastId after a clean stop").isEqualTo(highest);
        return lastIds;
    }

    private static void produce(String topic, long timestamp) {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < RECORDS; n++) {
                producer.send(new ProducerRecord<>(topic, n % PARTITIONS, timestamp, ("k" + n).getBytes(StandardCharsets.UTF_8),
                        ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    private static Map<Integer, Long> highestPerPartition(String output, int expected) {
        List<ConsumerRecord<byte[], byte[]>> records = broker.consume(output, expected, Duration.ofSeconds(90));
        assertThat(records).as("stamped records in " + output).hasSizeGreaterThanOrEqualTo(expected);
        return FrozenStamper.highestPerPartition(records);
    }

    private static List<JsonNode> awaitInspect(String app, Stamper.Topics topics, java.util.function.Predicate<List<JsonNode>> done,
                                               Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<JsonNode> states = List.of();
        while (System.nanoTime() < deadline) {
            Cli.Result inspect = cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json", "--timeout", "10s");
            states = inspect.exitCode() == 0 ? json(inspect) : List.of();
            if (done.test(states)) {
                return states;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("the changelog of " + app + " did not reach the expected state within " + timeout + ": " + states);
    }

    /** True once the reservations read have not changed for {@code quiet}. */
    private static java.util.function.Predicate<List<JsonNode>> unchangedFor(Duration quiet) {
        String[] last = {null};
        long[] since = {System.nanoTime()};
        return states -> {
            String now = states.stream().map(s -> s.get("partition").asText() + "=" + s.get("reservedUntil").asText()).toList().toString();
            if (!now.equals(last[0])) {
                last[0] = now;
                since[0] = System.nanoTime();
                return false;
            }
            return !states.isEmpty() && System.nanoTime() - since[0] >= quiet.toNanos();
        };
    }

    private static Cli.Result cli(Stamper.Topics topics, String... args) {
        return Cli.run(Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers(), "--set", "input.topic=" + topics.in(),
                "--set", "output.topic=" + topics.out(), "--set", "dlq.topic=" + topics.dlq()));
    }

    private static List<JsonNode> json(Cli.Result result) throws Exception {
        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<JsonNode> nodes = new ArrayList<>();
        for (String line : result.outLines()) {
            nodes.add(JSON.readTree(line));
        }
        return nodes;
    }
}
