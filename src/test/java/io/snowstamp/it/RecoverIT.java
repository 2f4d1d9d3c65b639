package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.snowstamp.it.FrozenStamper.LAYOUT;
import static org.assertj.core.api.Assertions.assertThat;

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

    private static String[] cli(FrozenStamper.Topics topics, String... args) {
        String[] all = Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers());
        return topics == null ? all : Cli.concat(all, topics.settings());
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
        assertThat(Cli.run(cli(topics, "changelog", "inspect", "--application-id", renamed)).exitCode()).isEqualTo(1);

        Cli.Result applied = Cli.run(cli(topics, "recover", "--from-changelog", old, "--from-output", topics.out(),
                "--to-application-id", renamed, "--apply"));
        assertThat(applied.exitCode()).as(applied.toString()).isZero();
        assertThat(applied.lastLine()).isEqualTo("seeded 2 partitions of " + Names.changelogTopic(renamed)
                + " (created: compacted, 2 partitions); start the stamper with application.id=" + renamed);
        List<JsonNode> seeds = inspect(topics, renamed);
        for (int p = 0; p < 2; p++) {
            JsonNode seed = seeds.get(p);
            assertThat(seed.get("holder").asText()).isEqualTo("recover");
            assertThat(seed.get("epoch").asLong()).isEqualTo(oldStates.get(p).get("epoch").asLong());
            assertThat(seed.get("lastId").asLong()).isEqualTo(seed.get("reservedUntil").asLong())
                    .isEqualTo(oldStates.get(p).get("reservedUntil").asLong());
        }

        // the new application id has no committed offsets: it stamps the whole input again, with new IDs
        List<ConsumerRecord<byte[], byte[]>> after;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, renamed, "it-2", work.resolve("state-new"), clock, NO_TAIL_GUARD)) {
            after = FrozenStamper.stamp(broker, topics, 300, 100, 700);
        }
        Map<Integer, Long> oldEnd = ChangelogIT.lastOffsets(before);
        List<ConsumerRecord<byte[], byte[]>> added = after.stream().filter(r -> r.offset() > oldEnd.get(r.partition())).toList();
        assertThat(added).hasSize(400);
        assertThat(added).allSatisfy(record -> assertThat(FrozenStamper.id(record)).as("partition %d", record.partition())
                .isGreaterThan(seeds.get(record.partition()).get("lastId").asLong())
                .isGreaterThan(highestOld.get(record.partition())));
        Cli.Result verify = Cli.run(cli(null, "verify", "--topic", topics.out()));
        assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=700 duplicates=0 missing=0 extra=0");
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
        assertThat(applied.lastLine()).as(applied.toString()).startsWith("seeded 2 partitions of " + Names.changelogTopic(app));
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
