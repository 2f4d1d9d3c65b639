package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.snowstamp.it.FrozenStamper.LAYOUT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory worker-state store upgrades a deployment in place: started on a changelog exactly
 * as the RocksDB version wrote it (a fixture recorded with that build, committed under
 * {@code src/test/resources/fixtures}), and on the local state directory that version leaves
 * behind, the stamper resumes above every recorded high-water mark, and the changelog commands
 * read the old records and the new ones alike.
 *
 * <p>The stamper's clock is frozen a day before the fixture was recorded, so only the restored
 * state can lift its IDs above the fixture's; a store that did not restore (or honoured the stale
 * checkpoint left behind, which claims everything is already restored) would issue IDs below them.
 */
@Tag("integration")
@Timeout(180)
class ChangelogUpgradeIT extends OnSharedBroker {
    private static final String FIXTURE = "/fixtures/worker-state-changelog-v1.txt";
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path work;

    /** One changelog record of the fixture, as bytes. */
    private record Recorded(int partition, byte[] key, byte[] value) {
    }

    @Test
    void shouldResumeAboveAChangelogWrittenByTheRocksDbVersion() throws Exception {
        List<Recorded> fixture = fixture();
        int partitions = 4;
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "upgrade", partitions);
        String app = TestBroker.unique("upgrade-app");
        String changelog = Names.changelogTopic(app);

        // the old deployment: its changelog (created as Kafka Streams creates it, same configs) ...
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            ChangelogWriter.ensureTopic(admin, changelog, partitions, Duration.ofSeconds(30));
        }
        Map<Integer, Long> recorded = new TreeMap<>();
        Map<Integer, Long> epochs = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (Recorded r : fixture) {
                producer.send(new ProducerRecord<>(changelog, r.partition(), r.key(), r.value())).get();
                WorkerState state = new WorkerStateSerde().deserializer().deserialize(changelog, r.value());
                recorded.merge(r.partition(), Math.max(state.lastId(), state.reservedUntil()), Math::max);
                epochs.put(r.partition(), state.epoch());
            }
        }
        assertThat(recorded).as("the fixture covers every partition").hasSize(partitions);
        // ... and the local state it leaves: a RocksDB directory per task and a checkpoint claiming the changelog
        // is restored to its end (had Kafka Streams honoured it, nothing would be restored)
        Path stateDir = work.resolve("state");
        for (int p = 0; p < partitions; p++) {
            Path task = stateDir.resolve("it-upgrade").resolve(app).resolve("0_" + p);
            Files.createDirectories(task.resolve("rocksdb").resolve(Names.STORE));
            Files.write(task.resolve("rocksdb").resolve(Names.STORE).resolve("000004.log"), new byte[]{1, 2, 3, 4, 5, 6, 7, 8});
            Files.writeString(task.resolve(".checkpoint"), "0\n1\n" + changelog + " " + p + " 6\n");
        }

        // the old records read as before
        List<JsonNode> before = inspect(topics, app);
        assertThat(before).hasSize(partitions);
        for (JsonNode state : before) {
            assertThat(Math.max(state.get("lastId").asLong(), state.get("reservedUntil").asLong()))
                    .isEqualTo(recorded.get(state.get("partition").asInt()));
            assertThat(state.get("layoutMatches").asBoolean()).isTrue();
        }

        long frozen = fixtureMillis(recorded) - 86_400_000L;
        List<ConsumerRecord<byte[], byte[]>> stamped;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-upgrade", stateDir, frozen, Map.of())) {
            stamped = FrozenStamper.stamp(broker, topics, 0, 200, 200);
        }
        Map<Integer, Long> lowest = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> record : stamped) {
            lowest.merge(record.partition(), FrozenStamper.id(record), Math::min);
        }
        assertThat(lowest).hasSize(partitions);
        lowest.forEach((p, id) -> assertThat(id).as("first new ID of partition %d vs. the recorded high-water mark", p)
                .isGreaterThan(recorded.get(p)));

        // the new version's records, after the old ones in the same topic, read with the same commands
        Map<Integer, Long> highest = FrozenStamper.highestPerPartition(stamped);
        for (JsonNode state : inspect(topics, app)) {
            int p = state.get("partition").asInt();
            assertThat(state.get("epoch").asLong()).isEqualTo(epochs.get(p) + 1);
            assertThat(state.get("holder").asText()).startsWith("it-upgrade#");
            assertThat(Math.max(state.get("lastId").asLong(), state.get("reservedUntil").asLong())).isGreaterThanOrEqualTo(highest.get(p));
        }
        Cli.Result recover = Cli.run(Cli.concat(new String[]{"recover", "--from-changelog", app, "--from-output", topics.out(),
                "--bootstrap-servers", broker.bootstrapServers()}, topics.settings()));
        assertThat(recover.exitCode()).as(recover.toString()).isZero();
        assertThat(recover.out()).as(recover.toString()).doesNotContain("error");
    }

    private static List<JsonNode> inspect(FrozenStamper.Topics topics, String app) throws IOException {
        Cli.Result result = Cli.run(Cli.concat(new String[]{"changelog", "inspect", "--application-id", app, "--format", "json",
                "--bootstrap-servers", broker.bootstrapServers()}, topics.settings()));
        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<JsonNode> nodes = new ArrayList<>();
        for (String line : result.outLines()) {
            nodes.add(JSON.readTree(line));
        }
        return nodes;
    }

    /** When the fixture was recorded: the time field of its highest ID. */
    private static long fixtureMillis(Map<Integer, Long> recorded) {
        long highest = recorded.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        return LAYOUT.decode(highest).wallMillis();
    }

    private static List<Recorded> fixture() throws IOException {
        List<Recorded> records = new ArrayList<>();
        Base64.Decoder base64 = Base64.getDecoder();
        try (InputStream in = ChangelogUpgradeIT.class.getResourceAsStream(FIXTURE)) {
            assertThat(in).as(FIXTURE).isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] fields = line.split(" ");
                records.add(new Recorded(Integer.parseInt(fields[0]), base64.decode(fields[1]), base64.decode(fields[2])));
            }
        }
        return records;
    }
}
