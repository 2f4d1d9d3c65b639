package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.registry.ClaimRefusedException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.snowstamp.it.FrozenStamper.LAYOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code recover} against a real broker and the real stamper: seeds computed from the changelog and
 * the output topic make a new deployment start above every ID ever issued, even with the tail
 * guard off and a clock frozen at the instant the old IDs were issued.
 */
@Tag("integration")
@Timeout(300)
class RecoverIT extends OnSharedBroker {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> NO_TAIL_GUARD = Map.of("recovery.tail-guard", "false");
    @TempDir
    Path work;

    /** A command on these topics with the worker registry off, as {@link FrozenStamper} runs by default. */
    private static String[] cli(FrozenStamper.Topics topics, String... args) {
        String[] all = Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers(), "--set", "id.worker-registry=off");
        return topics == null ? all : Cli.concat(all, topics.settings());
    }

    /** A command on these topics with the worker registry on, in a registry topic of the test's own. */
    private static String[] registered(FrozenStamper.Topics topics, String registry, String... args) {
        return Cli.concat(Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers(), "--set", "registry.topic=" + registry),
                topics.settings());
    }

    private static List<JsonNode> inspect(FrozenStamper.Topics topics, String app) throws Exception {
        Cli.Result result = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json"));
        assertThat(result.exitCode()).as(result.toString()).isZero();
        List<JsonNode> nodes = new ArrayList<>();
        for (String line : result.outLines()) {
            nodes.add(JSON.readTree(line));
        }
        return nodes;
    }

    @Test
    void shouldSeedANewApplicationIdAboveEveryOldIdWithoutTheTailGuard() throws Exception {
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "move", 2);
        String old = TestBroker.unique("move-old");
        String renamed = TestBroker.unique("move-new");
        long clock = FrozenStamper.aDayAgo();
        List<ConsumerRecord<byte[], byte[]>> before;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, old, "it-1", work.resolve("state-old"), clock, Map.of())) {
            before = FrozenStamper.stamp(broker, topics, 0, 300, 300);
        }
        Map<Integer, Long> highestOld = FrozenStamper.highestPerPartition(before);
        List<JsonNode> oldStates = inspect(topics, old);

        // a dry run by default: the bare --from-changelog means application.id
        Cli.Result dryRun = Cli.run(cli(topics, "recover", "--set", "application.id=" + old, "--from-changelog",
                "--from-output", topics.out(), "--to-application-id", renamed));
        assertThat(dryRun.exitCode()).as(dryRun.toString()).isZero();
        String[] lines = dryRun.outLines();
        assertThat(lines[0]).isEqualTo("recover " + Names.changelogTopic(old) + " + " + topics.out() + " (tail of each partition) -> "
                + Names.changelogTopic(renamed));
        assertThat(lines[1]).matches("partition +worker +from changelog +from output +resume +resume time +action");
        for (int p = 0; p < 2; p++) {
            long changelogMark = oldStates.get(p).get("reservedUntil").asLong();
            assertThat(changelogMark).isGreaterThan(highestOld.get(p));      // the reservation is a second ahead
            assertThat(lines[2 + p]).matches(" +" + p + " +" + p + " +" + changelogMark + " +" + highestOld.get(p) + " +"
                    + changelogMark + " +\\S+Z +seed");
        }
        assertThat(lines[4]).isEqualTo("dry run: nothing written; --apply writes 2 seeds into " + Names.changelogTopic(renamed));
        assertThat(lines[5]).isEqualTo("worker registry: off (id.worker-registry=off): nothing handed over");
        assertThat(Cli.run(cli(topics, "changelog", "inspect", "--application-id", renamed)).exitCode()).isEqualTo(1);

        Cli.Result applied = Cli.run(cli(topics, "recover", "--from-changelog", old, "--from-output", topics.out(),
                "--to-application-id", renamed, "--apply"));
        assertThat(applied.exitCode()).as(applied.toString()).isZero();
        assertThat(applied.outLines()).as(applied.toString()).endsWith("seeded 2 partitions of " + Names.changelogTopic(renamed)
                        + " (created: compacted, 2 partitions, replication.factor=1 min.insync.replicas=1 (auto: 1 broker))",
                "worker registry: off (id.worker-registry=off): nothing handed over",
                "start the stamper with application.id=" + renamed);
        List<JsonNode> seeds = inspect(topics, renamed);
        for (int p = 0; p < 2; p++) {
            JsonNode seed = seeds.get(p);
            assertThat(seed.get("holder").asText()).isEqualTo("recover");
            assertThat(seed.get("epoch").asLong()).isEqualTo(oldStates.get(p).get("epoch").asLong());
            assertThat(seed.get("lastId").asLong()).isEqualTo(seed.get("reservedUntil").asLong())
                    .isEqualTo(oldStates.get(p).get("reservedUntil").asLong());
        }

        List<ConsumerRecord<byte[], byte[]>> added = restamp(topics, renamed, clock, NO_TAIL_GUARD, before);
        assertThat(added).allSatisfy(record -> assertThat(FrozenStamper.id(record)).as("partition %d", record.partition())
                .isGreaterThan(seeds.get(record.partition()).get("lastId").asLong())
                .isGreaterThan(highestOld.get(record.partition())));
    }

    /**
     * Runs {@code app}, a new application id on the 300 records of {@code before}, over them and 100
     * more: with no committed offsets it stamps the whole input again, with new IDs. Checks that the
     * output then holds 700 records and no ID twice.
     *
     * @return the 400 records it wrote
     */
    private List<ConsumerRecord<byte[], byte[]>> restamp(FrozenStamper.Topics topics, String app, long clock, Map<String, String> settings,
                                                         List<ConsumerRecord<byte[], byte[]>> before) throws Exception {
        List<ConsumerRecord<byte[], byte[]>> after;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-2", work.resolve("state-" + app), clock, settings)) {
            after = FrozenStamper.stamp(broker, topics, 300, 100, 700);
        }
        Map<Integer, Long> oldEnd = ChangelogIT.lastOffsets(before);
        List<ConsumerRecord<byte[], byte[]>> added = after.stream().filter(r -> r.offset() > oldEnd.get(r.partition())).toList();
        assertThat(added).hasSize(400);
        Cli.Result verify = Cli.run(cli(null, "verify", "--topic", topics.out()));
        assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=700 duplicates=0 missing=0 extra=0");
        return added;
    }

    /**
     * The runbook "application id change" with the worker registry on, as a new user runs it: the new
     * id is refused while the old one holds the workers; {@code recover --apply} hands them over
     * (refused while the old application runs); the new application then joins the handed-over claim
     * with {@code id.worker-offset=auto} and, with the tail guard off and the clock frozen where the
     * old IDs were issued, resumes above every old ID.
     */
    @Test
    void shouldHandTheWorkersOverSoThatTheNewApplicationIdStartsAboveTheOldOne() throws Exception {
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "handover", 2);
        String registry = TestBroker.unique("workers");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(registry, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            // as topics apply does: until its leader takes writes (a stamper that looks at once may not find it yet)
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, registry, 1, java.time.Duration.ofSeconds(60));
        }
        Map<String, String> registryOn = Map.of("id.worker-registry", "on", "registry.topic", registry, "registry.heartbeat", "500ms");
        String old = TestBroker.unique("handover-old");
        String moved = TestBroker.unique("handover-new");
        long clock = FrozenStamper.aDayAgo();
        List<ConsumerRecord<byte[], byte[]>> before;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, old, "it-1", work.resolve("state-old"), clock, registryOn)) {
            before = FrozenStamper.stamp(broker, topics, 0, 300, 300);
            Cli.Result whileRunning = Cli.run(registered(topics, registry, "recover", "--from-changelog", old, "--to-application-id",
                    moved, "--apply"));
            assertThat(whileRunning.exitCode()).as(whileRunning.toString()).isEqualTo(1);
            assertThat(whileRunning.err().strip()).startsWith("error: application " + old + " is running (1 active member")
                    .contains("stop every instance before handing its workers over to " + moved).doesNotContain("\n");
        }
        Map<Integer, Long> highestOld = FrozenStamper.highestPerPartition(before);
        assertThat(Cli.run(cli(topics, "changelog", "inspect", "--application-id", moved)).exitCode()).as("nothing written").isEqualTo(1);
        // Kafka Streams created the old changelog with the minimum the stamper asked for (topic.min.insync.replicas)
        ConfigEntry changelogMinimum = TestBroker.topicConfig(broker.bootstrapServers(), Names.changelogTopic(old), "min.insync.replicas");
        assertThat(changelogMinimum.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(changelogMinimum.value()).isEqualTo("1");

        Map<String, String> movedSettings = new java.util.HashMap<>(registryOn);
        movedSettings.put("id.worker-offset", "auto");
        movedSettings.putAll(NO_TAIL_GUARD);
        Throwable refused = catchThrowable(() -> FrozenStamper.start(broker, topics, moved, "it-2", work.resolve("state-refused"), clock,
                Map.of("id.worker-registry", "on", "registry.topic", registry)));
        // README: "a startup error naming the old application and the fix" — the hand-over, not a new range (auto would
        // stamp the whole input again)
        assertThat(refused).as("the old application still holds workers 0..1").isInstanceOf(ClaimRefusedException.class)
                .hasMessageContaining("like application " + old + " (workers 0..1")
                .hasMessageContaining("'snowstamp recover --from-changelog " + old + " --from-output " + topics.out()
                        + " --to-application-id " + moved + " --apply'");

        Cli.Result dryRun = Cli.run(registered(topics, registry, "recover", "--from-changelog", old, "--to-application-id", moved));
        assertThat(dryRun.exitCode()).as(dryRun.toString()).isZero();
        assertThat(dryRun.lastLine()).isEqualTo("worker registry " + registry + ": --apply hands workers 0..1 (ID space default,"
                + " datacenter 0) over from " + old + " to " + moved + ": " + old + "'s claim (stopped cleanly) is released with the"
                + " resume points above as marks, and the workers are claimed for " + moved + ", which joins that claim when it starts");
        assertThat(workers(registry)).containsEntry(old, "stopped").doesNotContainKey(moved);

        Cli.Result applied = Cli.run(registered(topics, registry, "recover", "--from-changelog", old, "--to-application-id", moved,
                "--apply"));
        assertThat(applied.exitCode()).as(applied.toString()).isZero();
        assertThat(applied.outLines()).as(applied.toString()).endsWith("seeded 2 partitions of " + Names.changelogTopic(moved)
                        + " (created: compacted, 2 partitions, replication.factor=1 min.insync.replicas=1 (auto: 1 broker))",
                "worker registry " + registry + ": handed workers 0..1 (ID space default, datacenter 0) over from " + old + " to " + moved
                        + ": " + old + "'s claim (stopped cleanly) released with the resume points above as marks, and the workers claimed"
                        + " for " + moved + ", which joins that claim when it starts",
                "start the stamper with application.id=" + moved + " and id.worker-offset=0 or auto");
        assertThat(workers(registry)).containsEntry(old, "released").containsEntry(moved, "stopped");
        Cli.Result list = Cli.run(registered(topics, registry, "workers", "list", "--format", "json"));
        JsonNode releasedMarks = null;
        for (String line : list.outLines()) {
            JsonNode claim = JSON.readTree(line);
            if (claim.get("application").asText().equals(old)) {
                releasedMarks = claim.get("marks");
            }
        }
        assertThat(releasedMarks).as(list.toString()).isNotNull();
        List<JsonNode> seeds = inspect(topics, moved);
        for (int p = 0; p < 2; p++) {
            assertThat(releasedMarks.get(Integer.toString(p)).asLong()).as("the mark of worker %d is its resume point", p)
                    .isEqualTo(seeds.get(p).get("lastId").asLong()).isGreaterThanOrEqualTo(highestOld.get(p));
        }
        Cli.Result again = Cli.run(registered(topics, registry, "recover", "--from-changelog", old, "--to-application-id", moved));
        assertThat(again.lastLine()).as("recover run again: the hand-over is done").isEqualTo("worker registry " + registry
                + ": unchanged (" + moved + " already holds workers 0..1 (ID space default, datacenter 0))");

        // the new application joins the handed-over claim; no tail guard and the old clock: only state and marks lift its IDs
        assertThat(restamp(topics, moved, clock, movedSettings, before)).allSatisfy(record -> assertThat(FrozenStamper.id(record))
                .as("partition %d", record.partition()).isGreaterThan(highestOld.get(record.partition())));
        assertThat(workers(registry)).containsEntry(moved, "stopped");
    }

    /** application -> state of its newest claim, as {@code workers list} shows them. */
    private static Map<String, String> workers(String registry) throws Exception {
        Cli.Result list = Cli.run("workers", "list", "--format", "json", "--bootstrap-servers", broker.bootstrapServers(),
                "--set", "registry.topic=" + registry);
        assertThat(list.exitCode()).as(list.toString()).isZero();
        Map<String, String> states = new java.util.HashMap<>();
        for (String line : list.outLines()) {
            JsonNode claim = JSON.readTree(line);
            states.put(claim.get("application").asText(), claim.get("state").asText());
        }
        return states;
    }

    @Test
    void shouldSeedFromTheOutputAloneAfterTheChangelogWasDeleted() throws Exception {
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "lost", 2);
        String app = TestBroker.unique("lost-app");
        long clock = FrozenStamper.aDayAgo();
        Path state = work.resolve("state");
        List<ConsumerRecord<byte[], byte[]>> before;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-1", state, clock, Map.of())) {
            before = FrozenStamper.stamp(broker, topics, 0, 200, 200);
        }
        Map<Integer, Long> highest = FrozenStamper.highestPerPartition(before);
        FrozenStamper.deleteTopic(broker, Names.changelogTopic(app));

        Cli.Result tail = Cli.run(cli(topics, "recover", "--from-changelog", app));
        Cli.Result full = Cli.run(cli(topics, "recover", "--from-changelog", app, "--full-scan"));
        for (Cli.Result result : List.of(tail, full)) {
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.outLines()[0]).isEqualTo("note: changelog topic " + Names.changelogTopic(app)
                    + " does not exist: resume points come from " + topics.out() + " alone");
            for (int p = 0; p < 2; p++) {
                assertThat(result.outLines()[3 + p]).matches(" +" + p + " +" + p + " +- +" + highest.get(p) + " +" + highest.get(p)
                        + " +\\S+Z +seed");
            }
        }
        assertThat(full.outLines()[1]).endsWith("(full scan) -> " + Names.changelogTopic(app));

        Cli.Result applied = Cli.run(cli(topics, "recover", "--from-changelog", app, "--apply"));
        assertThat(applied.outLines()).as(applied.toString()).endsWith("seeded 2 partitions of " + Names.changelogTopic(app)
                + " (created: compacted, 2 partitions, replication.factor=1 min.insync.replicas=1 (auto: 1 broker))",
                "start the stamper with application.id=" + app);
        assertThat(inspect(topics, app)).extracting(s -> s.get("lastId").asLong()).containsExactly(highest.get(0), highest.get(1));

        // the same state directory (its checkpoint points past the new changelog's end), no tail guard, the same clock
        List<ConsumerRecord<byte[], byte[]>> after;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-2", state, clock, NO_TAIL_GUARD)) {
            Cli.Result refused = Cli.run(cli(topics, "recover", "--from-changelog", app, "--full-scan", "--apply"));
            assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(1);
            assertThat(refused.err().strip()).as(refused.toString()).startsWith("error: application " + app + " is running (1 active member")
                    .doesNotContain("\n");
            after = FrozenStamper.stamp(broker, topics, 200, 200, 400);
        }
        Map<Integer, Long> oldEnd = ChangelogIT.lastOffsets(before);
        assertThat(after.stream().filter(r -> r.offset() > oldEnd.get(r.partition())))
                .hasSize(200)
                .allSatisfy(record -> assertThat(FrozenStamper.id(record)).isGreaterThan(highest.get(record.partition())));
        Cli.Result verify = Cli.run(cli(null, "verify", "--topic", topics.out(), "--source", topics.in()));
        assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=400 duplicates=0 missing=0 extra=0");
    }

    @Test
    void shouldExplainAMissingOutputTopicAndNothingToRecover() throws Exception {
        Cli.Result missing = Cli.run(cli(null, "recover", "--from-output", "no-such-output"));
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.err().strip()).isEqualTo("error: output topic no-such-output does not exist: nothing to scan"
                + " (check --from-output and --bootstrap-servers)");

        String empty = TestBroker.unique("empty-out");
        broker.createTopic(empty, 2);
        String app = TestBroker.unique("never-ran");
        Cli.Result nothing = Cli.run(cli(null, "recover", "--from-changelog", app, "--from-output", empty));
        assertThat(nothing.exitCode()).isEqualTo(1);
        assertThat(nothing.out()).isEqualTo("note: changelog topic " + Names.changelogTopic(app) + " does not exist: resume points"
                + " come from " + empty + " alone" + System.lineSeparator());
        assertThat(nothing.err().strip()).isEqualTo("error: nothing to recover: changelog " + Names.changelogTopic(app) + " holds no"
                + " state and " + empty + " holds no ID of workers 0..1 in layout " + LAYOUT.fingerprint() + " in its tail (try"
                + " --full-scan); check --from-changelog, --from-output and the id.* settings");
    }
}
