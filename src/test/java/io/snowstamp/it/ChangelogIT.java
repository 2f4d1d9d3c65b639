package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.id.IdLayout;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static io.snowstamp.it.FrozenStamper.LAYOUT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code changelog inspect/history/export/import} against a real broker and the real stamper:
 * what they show is what known runs wrote, and an export survives the loss of the changelog.
 */
@Tag("integration")
@Timeout(300)
class ChangelogIT extends OnSharedBroker {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FP = LAYOUT.fingerprint();
    @TempDir
    Path work;

    private static String[] cli(FrozenStamper.Topics topics, String... args) {
        String[] all = Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers());
        return topics == null ? all : Cli.concat(all, topics.settings());
    }

    private static List<JsonNode> json(Cli.Result result) throws Exception {
        List<JsonNode> nodes = new ArrayList<>();
        for (String line : result.outLines()) {
            nodes.add(JSON.readTree(line));
        }
        return nodes;
    }

    private static long unitsOf(long millis) {
        return LAYOUT.unitsSinceEpoch(millis);
    }

    @Test
    void shouldShowWhatTwoRunsWroteAndRefuseAnImportWhileTheApplicationRuns() throws Exception {
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "hist", 2);
        String app = TestBroker.unique("hist-app");
        long first = FrozenStamper.aDayAgo();
        long second = first + 10_000;
        Path export = work.resolve("first.jsonl");

        List<ConsumerRecord<byte[], byte[]>> afterFirst;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-1", work.resolve("state"), first, Map.of())) {
            afterFirst = FrozenStamper.stamp(broker, topics, 0, 200, 200);
        }
        Cli.Result exported = Cli.run(cli(topics, "changelog", "export", "--application-id", app, "--file", export.toString()));
        assertThat(exported.exitCode()).as(exported.toString()).isZero();
        List<ConsumerRecord<byte[], byte[]>> all;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-2", work.resolve("state"), second, Map.of())) {
            all = FrozenStamper.stamp(broker, topics, 200, 200, 400);
            // the stamper would overwrite what is imported at its next commit, and keep issuing IDs above what was read
            Cli.Result refused = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", export.toString()));
            assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(1);
            assertThat(refused.err().strip()).startsWith("error: application " + app + " is running (1 active member: ")
                    .contains("stop every instance before importing worker state").doesNotContain("\n");
        }
        Map<Integer, Long> highestFirst = FrozenStamper.highestPerPartition(afterFirst);
        Map<Integer, Long> highestAll = FrozenStamper.highestPerPartition(all);

        // inspect: the second run's lease, its reservation ten seconds (10 x id.reservation) above its frozen clock
        Cli.Result inspect = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json"));
        assertThat(inspect.exitCode()).as(inspect.toString()).isZero();
        List<JsonNode> states = json(inspect);
        assertThat(states).hasSize(2);
        for (JsonNode state : states) {
            int p = state.get("partition").asInt();
            assertThat(state.get("workerId").asLong()).isEqualTo(p);
            assertThat(state.get("epoch").asLong()).isEqualTo(2);
            assertThat(state.get("holder").asText()).matches("it-2#[0-9a-f]{8}/.*");
            assertThat(state.get("acquiredAt").asText()).isEqualTo(java.time.Instant.ofEpochMilli(second).toString().replace("Z", ".000Z"));
            // written ahead at the first ID: ten times id.reservation (1 s) under exactly-once with the tail guard (the
            // changelog a high-water mark written rarely; the output tail decides a resume), plus its spread of p/16 of it
            long window = 10_000 + 10_000 * (p % 16) / 16;
            long reserved = LAYOUT.encode(unitsOf(second) + window, 0, p, LAYOUT.maxSequence());
            assertThat(state.get("reservedUntil").asLong()).isEqualTo(reserved);
            assertThat(state.get("reservedUntilTime").asText()).isEqualTo(
                    java.time.format.DateTimeFormatter.ISO_INSTANT.format(java.time.Instant.ofEpochMilli(second + window)).replaceAll("(:\\d\\d)Z$", "$1.000Z"));
            // the state is a high-water mark: lastId is what its last write saw (a reservation, a heartbeat, a flushed clean
            // stop: at most the last ID), reservedUntil covers every ID issued
            assertThat(state.get("lastId").asLong()).isLessThanOrEqualTo(highestAll.get(p));
            assertThat(state.get("reservedUntil").asLong()).isGreaterThanOrEqualTo(highestAll.get(p));
            assertThat(state.get("layoutMatches").asBoolean()).isTrue();
            assertThat(state.get("leadMillis").asLong()).isNegative();       // a frozen clock a day ago: long expired
        }
        Cli.Result table = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app));
        assertThat(table.outLines()[0]).startsWith("changelog " + Names.changelogTopic(app) + ": 2 partitions with state, now ");
        assertThat(table.outLines()[1]).matches("partition +worker +epoch +holder +acquiredAt +heartbeat +lastId +lastId time"
                + " +reservedUntil time +lead");
        // lastId "-": this short run's only writes were its lease and one reservation (no heartbeat, no flushed stop)
        assertThat(table.outLines()[2]).matches(" +0 +0 +2 +it-2#\\S+ +\\S+Z +\\S+Z \\(\\S+ ago\\) +(\\d+ +\\S+Z|- +-) +\\S+Z +-\\S+");

        // inspect with another layout: decoded with the stored layout, and a warning
        Cli.Result other = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app, "--set", "id.preset=sonyflake"));
        assertThat(other.exitCode()).isZero();
        assertThat(other.out()).contains("warning: partition 1 was written with ID layout " + FP
                + " but the configured layout is t39.d0.w16.s8.u10ms.e1577836800000.low");

        // history: per partition, the first run's lease, then the second's, marks only going up
        Cli.Result history = Cli.run(cli(topics, "changelog", "history", "--application-id", app, "--format", "json"));
        assertThat(history.exitCode()).as(history.toString()).isZero();
        List<JsonNode> records = json(history);
        for (int p = 0; p < 2; p++) {
            int partition = p;
            List<JsonNode> own = records.stream().filter(r -> r.get("partition").asInt() == partition).toList();
            assertThat(own).as(history.out()).hasSizeGreaterThanOrEqualTo(2);
            assertThat(kinds(own.get(0))).containsExactly("first");
            assertThat(own.get(0).get("epoch").asLong()).isEqualTo(1);
            assertThat(own.get(0).get("holder").asText()).matches("it-1#[0-9a-f]{8}/.*");
            assertThat(own.get(0).get("acquiredAt").asLong()).isEqualTo(first);
            List<JsonNode> leases = own.stream().filter(r -> kinds(r).contains("lease")).toList();
            assertThat(leases).hasSize(1);
            assertThat(leases.get(0).get("epoch").asLong()).isEqualTo(2);
            assertThat(leases.get(0).get("change").asText()).startsWith("new lease: epoch 1 -> 2 taken by it-2#").contains("(was it-1#");
            assertThat(own).allSatisfy(r -> assertThat(kinds(r)).noneMatch(kind -> kind.endsWith("-back")));
            assertThat(own).extracting(r -> r.get("offset").asLong()).isSorted();
            // the first run's last record covers its IDs; the last record is what inspect shows
            JsonNode lastOfFirst = own.get(own.indexOf(leases.get(0)) - 1);
            assertThat(Math.max(lastOfFirst.get("lastId").asLong(), lastOfFirst.get("reservedUntil").asLong()))
                    .isGreaterThanOrEqualTo(highestFirst.get(p));
            JsonNode shown = states.stream().filter(s -> s.get("partition").asInt() == partition).findFirst().orElseThrow();
            assertThat(own.get(own.size() - 1).get("reservedUntil").asLong()).isEqualTo(shown.get("reservedUntil").asLong());
            assertThat(own.get(own.size() - 1).get("offset").asLong()).isEqualTo(shown.get("offset").asLong());
        }
        Cli.Result one = Cli.run(cli(topics, "changelog", "history", "--application-id", app, "--partition", "1"));
        assertThat(one.exitCode()).as(one.toString()).isZero();
        assertThat(one.outLines()[0]).matches("partition +offset +writtenAt +epoch +holder +change");
        assertThat(Arrays.stream(one.outLines()).skip(1)).allMatch(line -> line.matches(" +1 .*"))
                .anyMatch(line -> line.contains("first state: epoch 1 held by it-1#"))
                .anyMatch(line -> line.contains("new lease: epoch 1 -> 2 taken by it-2#"));
    }

    private static List<String> kinds(JsonNode record) {
        List<String> kinds = new ArrayList<>();
        record.get("changes").forEach(kind -> kinds.add(kind.asText()));
        return kinds;
    }

    @Test
    void shouldRestoreAnExportAfterTheChangelogIsDeletedAndNotRepeatAnId() throws Exception {
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "restore", 2);
        String app = TestBroker.unique("restore-app");
        long clock = FrozenStamper.aDayAgo();
        Path export = work.resolve("backup.jsonl");
        List<ConsumerRecord<byte[], byte[]>> before;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-1", work.resolve("state-1"), clock, Map.of())) {
            before = FrozenStamper.stamp(broker, topics, 0, 300, 300);
        }
        Cli.Result exported = Cli.run(cli(topics, "changelog", "export", "--application-id", app, "--file", export.toString()));
        assertThat(exported.out().strip()).as(exported.toString()).isEqualTo("exported 2 partitions of " + Names.changelogTopic(app)
                + " to " + export + " (layout " + FP + ")");
        List<String> lines = Files.readAllLines(export);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("{\"format\":\"snowstamp-worker-state\",\"version\":1,\"applicationId\":\"" + app + "\",");

        FrozenStamper.deleteTopic(broker, Names.changelogTopic(app));
        Cli.Result gone = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app));
        assertThat(gone.exitCode()).isEqualTo(1);
        assertThat(gone.err()).startsWith("error: changelog topic " + Names.changelogTopic(app) + " does not exist");

        Cli.Result dryRun = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", export.toString(), "--dry-run"));
        assertThat(dryRun.exitCode()).as(dryRun.toString()).isZero();
        assertThat(dryRun.out()).contains("(does not exist yet: created compacted with 2 partitions)",
                "dry run: 2 partitions would be written to " + Names.changelogTopic(app) + "; nothing written");
        assertThat(Cli.run(cli(topics, "changelog", "inspect", "--application-id", app)).exitCode()).isEqualTo(1);

        Cli.Result imported = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", export.toString()));
        assertThat(imported.exitCode()).as(imported.toString()).isZero();
        assertThat(imported.outLines()).anyMatch(line -> line.matches(" +0 +0 +write +- -> 1 +- +\\d+ +\\S+Z"))
                .contains("imported 2 partitions into " + Names.changelogTopic(app));

        // lost local state too (new state directory), no tail guard, the same frozen clock: only the import can help
        List<ConsumerRecord<byte[], byte[]>> after;
        try (FrozenStamper run = FrozenStamper.start(broker, topics, app, "it-2", work.resolve("state-2"), clock,
                Map.of("recovery.tail-guard", "false"))) {
            after = FrozenStamper.stamp(broker, topics, 300, 300, 600);
        }
        Map<Integer, Long> old = FrozenStamper.highestPerPartition(before);
        Map<Integer, Long> oldEnd = lastOffsets(before);
        List<ConsumerRecord<byte[], byte[]>> added = after.stream().filter(r -> r.offset() > oldEnd.get(r.partition())).toList();
        assertThat(added).hasSize(300);
        // the same frozen clock would have started at sequence 0 of the same millisecond: the imported marks moved it
        assertThat(added).allSatisfy(record -> assertThat(FrozenStamper.id(record)).as("new ID in partition %d", record.partition())
                .isGreaterThan(old.get(record.partition())));
        Cli.Result verify = Cli.run(cli(null, "verify", "--topic", topics.out(), "--source", topics.in()));
        assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=600 duplicates=0 missing=0 extra=0");
        Cli.Result inspect = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json"));
        assertThat(json(inspect)).allSatisfy(state -> assertThat(state.get("epoch").asLong()).isEqualTo(2));
    }

    /** Highest offset per partition (offsets are not counts: transaction markers take offsets too). */
    static Map<Integer, Long> lastOffsets(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<Integer, Long> last = new java.util.TreeMap<>();
        records.forEach(r -> last.merge(r.partition(), r.offset(), Math::max));
        return last;
    }

    @Test
    void shouldRefuseALowerMarkAnotherLayoutAndAnUnknownFormat() throws Exception {
        FrozenStamper.Topics topics = FrozenStamper.Topics.create(broker, "refuse", 2);
        String app = TestBroker.unique("refuse-app");
        long t = 400_000_000L;
        Path high = work.resolve("high.jsonl");
        Files.writeString(high, file(app, FP, t + 100));
        Cli.Result imported = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", high.toString()));
        assertThat(imported.exitCode()).as(imported.toString()).isZero();
        assertThat(imported.out()).contains("imported 2 partitions into " + Names.changelogTopic(app));

        Cli.Result again = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", high.toString()));
        assertThat(again.out()).as(again.toString()).contains("nothing to write: " + Names.changelogTopic(app) + " already holds this state");

        Path low = work.resolve("low.jsonl");
        Files.writeString(low, file(app, FP, t));
        Cli.Result lower = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", low.toString()));
        assertThat(lower.exitCode()).as(lower.toString()).isEqualTo(1);
        long highMark0 = LAYOUT.encode(t + 100 + 1000, 0, 0, 4095);
        long lowMark0 = LAYOUT.encode(t + 1000, 0, 0, 4095);
        assertThat(lower.err().strip()).startsWith("error: refusing to lower the high-water mark (max of lastId and reservedUntil) of"
                + " partition 0 from " + highMark0 + " (2020-01-05T15:06:41.100Z) to " + lowMark0 + " (2020-01-05T15:06:41Z), partition 1 from ");
        Cli.Result dryLower = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", low.toString(), "--dry-run"));
        assertThat(dryLower.exitCode()).isEqualTo(1);
        assertThat(dryLower.err()).startsWith("error: refusing to lower");
        Cli.Result unchanged = Cli.run(cli(topics, "changelog", "inspect", "--application-id", app, "--format", "json"));
        assertThat(json(unchanged).get(0).get("reservedUntil").asLong()).isEqualTo(highMark0);

        Cli.Result layout = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", high.toString(),
                "--set", "id.preset=sonyflake"));
        assertThat(layout.exitCode()).isEqualTo(1);
        assertThat(layout.err().strip()).as(layout.toString()).startsWith("error: the file has ID layout " + FP
                + " but the configured layout is " + IdLayout.preset("sonyflake").fingerprint());

        Path newer = work.resolve("newer.jsonl");
        Files.writeString(newer, file(app, FP, t + 200).replace("\"version\":1", "\"version\":2"));
        Cli.Result version = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", newer.toString()));
        assertThat(version.exitCode()).isEqualTo(1);
        assertThat(version.err().strip()).isEqualTo("error: " + newer + " has format version 2: this snowstamp reads version 1 only"
                + " (written by a newer snowstamp?)");
        Path foreign = work.resolve("foreign.jsonl");
        Files.writeString(foreign, "{\"partition\":0,\"offset\":1,\"value\":\"x\"}\n");
        Cli.Result format = Cli.run(cli(topics, "changelog", "import", "--application-id", app, "--file", foreign.toString()));
        assertThat(format.err()).startsWith("error: " + foreign + " is not a snowstamp worker-state export: line 1 has format (none)");

        Cli.Result noInput = Cli.run(cli(null, "changelog", "import", "--application-id", app, "--file", high.toString(),
                "--set", "input.topic=no-such-input"));
        assertThat(noInput.err()).startsWith("error: input topic no-such-input does not exist on this cluster");
    }

    /** An export of two partitions whose marks are at {@code time} (lastId) and one second later (reservedUntil). */
    private static String file(String app, String layout, long time) {
        StringBuilder text = new StringBuilder("{\"format\":\"snowstamp-worker-state\",\"version\":1,\"applicationId\":\"" + app
                + "\",\"exportedAt\":\"2026-01-01T00:00:00.000Z\",\"layout\":\"" + layout + "\"}\n");
        for (int p = 0; p < 2; p++) {
            text.append("{\"partition\":").append(p).append(",\"layoutFingerprint\":\"").append(layout).append("\",\"workerId\":")
                    .append(p).append(",\"epoch\":3,\"holder\":\"old/t1\",\"acquiredAt\":1767225600000,\"heartbeatAt\":1767225605000,")
                    .append("\"lastId\":").append(LAYOUT.encode(time, 0, p, 0)).append(",\"reservedUntil\":")
                    .append(LAYOUT.encode(time + 1000, 0, p, 4095)).append("}\n");
        }
        return text.toString();
    }

    @Test
    void shouldExplainAMissingOrEmptyChangelogInOneLine() throws Exception {
        String ghost = TestBroker.unique("ghost");
        for (String command : List.of("inspect", "history", "export")) {
            String[] args = cli(null, "changelog", command, "--application-id", ghost);
            Cli.Result missing = Cli.run(command.equals("export") ? Cli.concat(args, "--file", work.resolve("x.jsonl").toString()) : args);
            assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(1);
            assertThat(missing.err().strip()).isEqualTo("error: changelog topic " + ghost + "-worker-state-changelog does not exist: has"
                    + " application " + ghost + " ever run against this cluster? (check --application-id / application.id and --bootstrap-servers)");
            assertThat(missing.out()).isEmpty();
        }
        assertThat(Files.exists(work.resolve("x.jsonl"))).isFalse();

        String empty = TestBroker.unique("empty");
        broker.createTopic(Names.changelogTopic(empty), 2);
        Cli.Result inspect = Cli.run(cli(null, "changelog", "inspect", "--application-id", empty));
        assertThat(inspect.exitCode()).isEqualTo(1);
        assertThat(inspect.err().strip()).isEqualTo("error: changelog topic " + empty + "-worker-state-changelog is empty: application "
                + empty + " has not started a task yet, so there is no worker state");
        Cli.Result history = Cli.run(cli(null, "changelog", "history", "--application-id", empty, "--partition", "1"));
        assertThat(history.err().strip()).isEqualTo("error: partition 1 of changelog topic " + empty
                + "-worker-state-changelog is empty: no task of application " + empty + " has run for it");
        Cli.Result beyond = Cli.run(cli(null, "changelog", "history", "--application-id", empty, "--partition", "2"));
        assertThat(beyond.err().strip()).isEqualTo("error: --partition=2 is invalid: accepted 0..1 (changelog topic "
                + empty + "-worker-state-changelog has 2 partitions)");
    }
}
