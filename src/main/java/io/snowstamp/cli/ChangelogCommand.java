package io.snowstamp.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.SnowstampException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ApplicationGroup;
import io.snowstamp.recovery.ChangelogEntry;
import io.snowstamp.recovery.ChangelogReader;
import io.snowstamp.recovery.ChangelogUnavailableException;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.recovery.ImportPlan;
import io.snowstamp.recovery.StateChange;
import io.snowstamp.recovery.StateFile;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.WorkerState;
import io.snowstamp.stream.Names;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;

@Command(name = "changelog", header = "Reads and writes the worker-state changelog: inspect, history, export, import.",
        description = "The worker-state changelog <application.id>-worker-state-changelog is snowstamp's recovery file: "
                + "per input partition, the worker lease (epoch, holder, heartbeat) and the high-water mark (lastId, "
                + "reservedUntil). These commands replay it with a plain consumer (read_committed, no consumer group, "
                + "up to the end offsets taken when the read starts), so they work while the stamper is stopped.",
        footer = {"", "Example:", "  snowstamp changelog inspect --application-id orders"},
        subcommands = {ChangelogCommand.Inspect.class, ChangelogCommand.History.class, ChangelogCommand.Export.class,
                ChangelogCommand.Import.class})
final class ChangelogCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.usageError(spec);
    }

    /** Output of inspect and history. */
    enum Format { table, json }

    /** The application whose changelog is read, and how long reading may take. */
    static final class Target {
        @Option(names = "--application-id", paramLabel = "ID",
                description = "the application whose changelog to use (ID-worker-state-changelog); same as --set application.id=ID"
                        + " (default: application.id)")
        String applicationId;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
                description = "give up if the changelog cannot be read to its end in this time (default: ${DEFAULT-VALUE})")
        Duration limit;

        Map<String, String> flags() {
            Map<String, String> flags = new LinkedHashMap<>();
            if (applicationId != null) {
                flags.put(Keys.APPLICATION_ID, applicationId);
            }
            return flags;
        }

        /** Connects within --timeout: an unreachable cluster fails in seconds, naming it. */
        KafkaOptions.Connection connect(KafkaOptions options, SnowstampConfig loaded) {
            return options.connect(loaded, 0, limit);
        }
    }

    @Command(name = "inspect", header = "Shows the current worker state of every partition.",
            description = "Shows the newest worker state of every partition: worker, lease epoch and holder, when the "
                    + "lease was taken, the last heartbeat (and how long ago), the last ID issued and its time, the time "
                    + "up to which IDs are reserved, and the lead (reservation time minus now). IDs are decoded with "
                    + "the layout they were issued with; a warning says when that differs from the configured layout "
                    + "(the stamper would refuse to start). --format json prints one JSON object per partition and "
                    + "line: {\"partition\", \"workerId\", \"epoch\", \"holder\", \"acquiredAt\", \"heartbeatAt\", "
                    + "\"heartbeatAgoMillis\", \"lastId\", \"lastIdTime\", \"reservedUntil\", \"reservedUntilTime\", "
                    + "\"leadMillis\", \"layoutFingerprint\", \"layoutMatches\", \"offset\", \"writtenAt\", \"recordTimestamp\"} "
                    + "(times ISO-8601 UTC, null when none; IDs -1 when none; writtenAt is the writer's clock, null for "
                    + "states written before format version 2). Exit 1 if the changelog does not exist or is empty.",
            footer = {"", "Examples:", "  snowstamp changelog inspect", "  snowstamp changelog inspect --application-id orders --format json"})
    static final class Inspect implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Mixin
        Target target;

        @Option(names = "--format", paramLabel = "F", defaultValue = "table",
                description = "table (for a terminal) or json (one object per line) (default: ${DEFAULT-VALUE})")
        Format format;

        @Override
        public Integer call() {
            Duration limit = target.limit;
            SnowstampConfig loaded = options.load(target.flags());
            try (KafkaOptions.Connection connection = target.connect(options, loaded)) {
                SnowstampConfig config = connection.config();
                Map<Integer, ChangelogEntry> latest = ChangelogReader.latest(KafkaSettings.consumer(config), config.applicationId(), limit);
                print(config, latest, System.currentTimeMillis(), spec.commandLine().getOut(), spec.commandLine().getErr());
                return 0;
            }
        }

        private void print(SnowstampConfig config, Map<Integer, ChangelogEntry> latest, long now, PrintWriter out, PrintWriter err) {
            IdLayout configured = config.layout();
            List<String> warnings = layoutWarnings(latest, configured);
            if (format == Format.json) {
                latest.values().forEach(entry -> out.println(inspectJson(entry, configured, now)));
                warnings.forEach(w -> err.println("warning: " + w));
                out.flush();
                err.flush();
                return;
            }
            out.println("changelog " + Names.changelogTopic(config.applicationId()) + ": " + latest.size() + " partition"
                    + (latest.size() == 1 ? "" : "s") + " with state, now " + StateText.iso(now));
            TextTable table = new TextTable("partition", "worker", "epoch", "holder", "acquiredAt", "heartbeat", "lastId",
                    "lastId time", "reservedUntil time", "lead");
            for (ChangelogEntry entry : latest.values()) {
                WorkerState s = entry.state();
                IdLayout layout = StateText.layoutOf(s, configured);
                Long reserved = StateText.idMillis(layout, s.reservedUntil());
                table.add(entry.key(), s.workerId(), s.epoch(), s.holder().isEmpty() ? "-" : s.holder(),
                        s.acquiredAt() == 0 ? "-" : StateText.iso(s.acquiredAt()),
                        s.heartbeatAt() == 0 ? "-" : StateText.iso(s.heartbeatAt()) + " (" + StateText.ago(now, s.heartbeatAt()) + ")",
                        StateText.id(s.lastId()), StateText.idTime(layout, s.lastId()), StateText.idTime(layout, s.reservedUntil()),
                        reserved == null ? "-" : StateText.signed(reserved - now));
            }
            table.print(out);
            warnings.forEach(w -> out.println("warning: " + w));
            out.flush();
        }
    }

    @Command(name = "history", header = "Shows every changelog record with what changed: the audit trail.",
            description = "Prints every record of the changelog (or of one partition) in offset order, partition by "
                    + "partition, with what changed since the previous record of that partition: a new lease (epoch "
                    + "bump, new holder), jumps of lastId and reservedUntil (as time), heartbeats; changes the stamper "
                    + "never makes (an epoch or a mark going down, a layout or worker change) are marked BACK or named. "
                    + "Compaction may have removed older records. writtenAt is the writer's wall clock when it wrote the "
                    + "state; a state written before format version 2 has none and shows its Kafka record timestamp, "
                    + "marked ~ (that is the time of the input record being processed, not of the write). --format json "
                    + "prints one JSON object per record and line: {\"partition\", \"offset\", \"writtenAt\", "
                    + "\"recordTimestamp\", \"layoutFingerprint\", \"workerId\", \"epoch\", \"holder\", \"acquiredAt\", "
                    + "\"heartbeatAt\", \"lastId\", \"reservedUntil\", \"changes\", \"change\"} (times as Unix millis, "
                    + "writtenAt null when unknown, changes as a list of kinds: first, lease, lastId, reservedUntil, "
                    + "heartbeat, ...).",
            footer = {"", "Examples:", "  snowstamp changelog history --partition 0",
                    "  snowstamp changelog history --application-id orders --format json > h.jsonl"})
    static final class History implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Mixin
        Target target;

        @Option(names = "--partition", paramLabel = "P", description = "only this partition (default: all)")
        Integer partition;

        @Option(names = "--format", paramLabel = "F", defaultValue = "table",
                description = "table (for a terminal) or json (one object per line) (default: ${DEFAULT-VALUE})")
        Format format;

        @Override
        public Integer call() {
            Duration limit = target.limit;
            SnowstampConfig loaded = options.load(target.flags());
            PrintWriter out = spec.commandLine().getOut();
            try (KafkaOptions.Connection connection = target.connect(options, loaded)) {
                SnowstampConfig config = connection.config();
                IdLayout configured = config.layout();
                Map<Integer, WorkerState> previous = new HashMap<>();
                TextTable table = new TextTable("partition", "offset", "writtenAt", "epoch", "holder", "change");
                long[] count = {0};
                ChangelogReader.read(KafkaSettings.consumer(config), config.applicationId(), partition, limit, entry -> {
                    WorkerState before = previous.get(entry.key());
                    WorkerState state = entry.state();
                    IdLayout layout = state == null ? configured : StateText.layoutOf(state, configured);
                    StateChange change = StateChange.between(before, state, layout);
                    if (state == null) {
                        previous.remove(entry.key());
                    } else {
                        previous.put(entry.key(), state);
                    }
                    count[0]++;
                    if (format == Format.json) {
                        out.println(historyJson(entry, change));
                    } else {
                        table.add(entry.key(), entry.offset(), writtenAtText(entry),
                                state == null ? "-" : state.epoch(), state == null || state.holder().isEmpty() ? "-" : state.holder(),
                                change.description());
                    }
                });
                if (count[0] == 0) {
                    String topic = Names.changelogTopic(config.applicationId());
                    if (partition == null) {
                        throw new ChangelogUnavailableException(topic, config.applicationId(), ChangelogUnavailableException.Reason.EMPTY);
                    }
                    throw new SnowstampException("partition " + partition + " of changelog topic " + topic
                            + " is empty: no task of application " + config.applicationId() + " has run for it");
                }
                if (format == Format.table) {
                    table.print(out);
                }
                out.flush();
                return 0;
            }
        }
    }

    @Command(name = "export", header = "Writes the current worker state to a file (JSON lines, versioned).",
            description = "Writes the newest worker state of every partition to --file: JSON lines, the first a header "
                    + "{\"format\":\"snowstamp-worker-state\", \"version\":1,\"applicationId\", \"exportedAt\", \"layout\"}, "
                    + "then one line per partition with every field: {\"partition\", \"layoutFingerprint\", \"workerId\", "
                    + "\"epoch\", \"holder\", \"acquiredAt\", \"heartbeatAt\", \"lastId\", \"reservedUntil\"} (times as Unix "
                    + "millis, -1 = no ID). 'changelog import' reads it back. The file is replaced atomically. Exit 1 if "
                    + "the changelog does not exist or is empty.",
            footer = {"", "Examples:", "  snowstamp changelog export --file state.jsonl",
                    "  snowstamp changelog export --application-id orders --file - | gzip > s.gz"})
    static final class Export implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Mixin
        Target target;

        @Option(names = "--file", paramLabel = "F", required = true, description = "file to write ('-' = stdout)")
        String file;

        @Override
        public Integer call() throws IOException {
            Duration limit = target.limit;
            SnowstampConfig loaded = options.load(target.flags());
            try (KafkaOptions.Connection connection = target.connect(options, loaded)) {
                SnowstampConfig config = connection.config();
                Map<Integer, ChangelogEntry> latest = ChangelogReader.latest(KafkaSettings.consumer(config), config.applicationId(), limit);
                Map<Integer, WorkerState> states = new TreeMap<>();
                latest.forEach((key, entry) -> states.put(key, entry.state()));
                Set<String> stored = new TreeSet<>();
                states.values().forEach(s -> stored.add(s.layoutFingerprint()));
                // the file's layout is the one its IDs were issued with; the configured one only if the states disagree
                String layout = stored.size() == 1 ? stored.iterator().next() : config.layout().fingerprint();
                StateFile export = new StateFile(new StateFile.Header(config.applicationId(),
                        StateText.iso(System.currentTimeMillis()), layout), new TreeMap<>(states));
                PrintWriter report = file.equals("-") ? spec.commandLine().getErr() : spec.commandLine().getOut();
                write(export, file, spec.commandLine().getOut());
                layoutWarnings(latest, config.layout()).forEach(w -> spec.commandLine().getErr().println("warning: " + w));
                report.println("exported " + states.size() + " partition" + (states.size() == 1 ? "" : "s") + " of "
                        + Names.changelogTopic(config.applicationId()) + " to " + (file.equals("-") ? "stdout" : file)
                        + " (layout " + layout + ")");
                report.flush();
                spec.commandLine().getErr().flush();
                return 0;
            }
        }

        private static void write(StateFile export, String file, PrintWriter stdout) throws IOException {
            if (file.equals("-")) {
                export.write(stdout);
                return;
            }
            Path path = Path.of(file).toAbsolutePath();
            Path temp = path.resolveSibling(path.getFileName() + ".tmp");
            try (PrintWriter writer = new PrintWriter(new OutputStreamWriter(Files.newOutputStream(temp), StandardCharsets.UTF_8))) {
                export.write(writer);
                if (writer.checkError()) {
                    throw new SnowstampException("cannot write " + temp);
                }
            }
            Files.move(temp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    @Command(name = "import", header = "Writes worker state from an export file into the changelog (never lowering a mark).",
            description = "Reads a file written by 'changelog export' and writes its states into the changelog of "
                    + "--application-id (default application.id), creating the topic (compacted, as many partitions "
                    + "as the input topic) when it is missing. Prints per partition what changes: write, unchanged, or "
                    + "keep (not in the file). Refuses, writing nothing: a file of another format or version; a file "
                    + "whose ID layout differs from the configured one (set the old id.* keys); a partition or worker "
                    + "that does not fit the configuration; any partition whose high-water mark (max of lastId and "
                    + "reservedUntil) would be lower than the changelog's now; and an application that has active "
                    + "members (stop it first). The epoch never goes down either. A partition is unchanged when its "
                    + "epoch and marks (lastId, reservedUntil) would stay the same; lease details (holder, heartbeat) "
                    + "are no reason to write. Written states carry the import's time as writtenAt. --dry-run checks "
                    + "and prints the same and writes nothing; it also works while the application runs (it names "
                    + "the active members: a real import would be refused).",
            footer = {"", "Examples:", "  snowstamp changelog import --file state.jsonl --dry-run",
                    "  snowstamp changelog import --application-id orders --file state.jsonl"})
    static final class Import implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Mixin
        Target target;

        @Option(names = "--file", paramLabel = "F", required = true, description = "export file to read ('-' = stdin)")
        String file;

        @Option(names = "--dry-run", description = "check and print what would change; write nothing")
        boolean dryRun;

        @Override
        public Integer call() throws IOException {
            Duration limit = target.limit;
            StateFile export = read(file);
            SnowstampConfig loaded = options.load(target.flags());
            PrintWriter out = spec.commandLine().getOut();
            try (KafkaOptions.Connection connection = target.connect(options, loaded)) {
                SnowstampConfig config = connection.config();
                String app = config.applicationId();
                String topic = Names.changelogTopic(app);
                try (Admin admin = Admin.create(KafkaSettings.client(config))) {
                    int partitions = inputPartitions(admin, config, limit);
                    List<String> members = ApplicationGroup.activeMembers(admin, app, limit);
                    if (!dryRun) {
                        ApplicationGroup.requireStopped(members, app, "importing worker state");
                    }
                    Optional<Integer> existing = ChangelogWriter.partitionCount(admin, topic, limit);
                    if (existing.isPresent() && existing.get() != partitions) {
                        throw new SnowstampException("changelog topic " + topic + " has " + existing.get() + " partitions but input topic "
                                + config.inputTopic() + " has " + partitions + ": Kafka Streams needs them equal");
                    }
                    Map<Integer, WorkerState> current = existing.isPresent()
                            ? ChangelogReader.latestOrNone(KafkaSettings.consumer(config), app, limit) : Map.of();
                    ImportPlan plan = ImportPlan.plan(export, current, config.layout(), config.workerOffset(), partitions, topic);
                    out.println((dryRun ? "dry run: " : "") + "import " + (file.equals("-") ? "stdin" : file) + " (application "
                            + export.header().applicationId() + ", exported " + export.header().exportedAt() + ") into " + topic
                            + (existing.isPresent() ? "" : " (does not exist yet: created compacted with " + partitions + " partitions)"));
                    printPlan(plan, config.layout(), out);
                    if (!members.isEmpty()) {
                        out.println("dry run: application " + app + " is running (" + members.size() + " active member"
                                + (members.size() == 1 ? "" : "s") + "): stop every instance before the real import");
                    }
                    Map<Integer, WorkerState> writes = plan.writes();
                    if (writes.isEmpty()) {
                        out.println("nothing to write: " + topic + " already holds this state");
                    } else if (dryRun) {
                        out.println("dry run: " + writes.size() + " partition" + (writes.size() == 1 ? "" : "s")
                                + " would be written to " + topic + "; nothing written");
                    } else {
                        ChangelogWriter.ensureTopic(admin, topic, partitions, limit);
                        ChangelogWriter.write(KafkaSettings.producer(config), topic, writes, limit);
                        out.println("imported " + writes.size() + " partition" + (writes.size() == 1 ? "" : "s") + " into " + topic);
                    }
                    out.flush();
                    return 0;
                }
            }
        }

        private StateFile read(String name) throws IOException {
            if (name.equals("-")) {
                return StateFile.read(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), "stdin");
            }
            Path path = Path.of(name);
            if (!Files.isRegularFile(path)) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--file=" + name + " is invalid: "
                        + (Files.exists(path) ? "not a regular file" : "the file does not exist"));
            }
            try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
                return StateFile.read(reader, name);
            }
        }

        private static void printPlan(ImportPlan plan, IdLayout layout, PrintWriter out) {
            TextTable table = new TextTable("partition", "worker", "action", "epoch", "mark before", "mark after", "mark after time");
            for (ImportPlan.Row row : plan.rows()) {
                WorkerState before = row.current();
                WorkerState after = row.after();
                String action = switch (row.action()) {
                    case WRITE -> "write";
                    case UNCHANGED -> "unchanged";
                    case KEEP -> "keep (not in file)";
                };
                table.add(row.partition(), after.workerId(), action,
                        (before == null ? "-" : before.epoch()) + " -> " + after.epoch(),
                        before == null ? "-" : StateText.id(before.highWaterMark()), StateText.id(after.highWaterMark()),
                        StateText.idTime(layout, after.highWaterMark()));
            }
            table.print(out);
        }
    }

    /** Partition count of the configured input topic: the changelog must have as many. */
    static int inputPartitions(Admin admin, SnowstampConfig config, Duration timeout) {
        return ChangelogWriter.partitionCount(admin, config.inputTopic(), timeout).orElseThrow(() -> new SnowstampException(
                "input topic " + config.inputTopic() + " does not exist on this cluster: create the topics first ('snowstamp "
                        + "topics apply'); the changelog gets as many partitions as the input topic"));
    }

    /** One warning per partition whose state was written with another layout than the configured one. */
    static List<String> layoutWarnings(Map<Integer, ChangelogEntry> latest, IdLayout configured) {
        List<String> warnings = new ArrayList<>();
        latest.forEach((key, entry) -> {
            String stored = entry.state().layoutFingerprint();
            if (!stored.equals(configured.fingerprint())) {
                warnings.add("partition " + key + " was written with ID layout " + stored + " but the configured layout is "
                        + configured.fingerprint() + " (IDs shown decoded with the stored layout; the stamper would refuse to start)");
            }
        });
        return warnings;
    }

    private static String inspectJson(ChangelogEntry entry, IdLayout configured, long now) {
        WorkerState s = entry.state();
        IdLayout layout = StateText.layoutOf(s, configured);
        Long lastMillis = StateText.idMillis(layout, s.lastId());
        Long reservedMillis = StateText.idMillis(layout, s.reservedUntil());
        ObjectNode node = JSON.createObjectNode();
        node.put("partition", entry.key());
        node.put("workerId", s.workerId());
        node.put("epoch", s.epoch());
        node.put("holder", s.holder());
        node.put("acquiredAt", StateText.isoOrNull(s.acquiredAt()));
        node.put("heartbeatAt", StateText.isoOrNull(s.heartbeatAt()));
        node.put("heartbeatAgoMillis", s.heartbeatAt() == 0 ? null : now - s.heartbeatAt());
        node.put("lastId", s.lastId());
        node.put("lastIdTime", lastMillis == null ? null : StateText.iso(lastMillis));
        node.put("reservedUntil", s.reservedUntil());
        node.put("reservedUntilTime", reservedMillis == null ? null : StateText.iso(reservedMillis));
        node.put("leadMillis", reservedMillis == null ? null : reservedMillis - now);
        node.put("layoutFingerprint", s.layoutFingerprint());
        node.put("layoutMatches", s.layoutFingerprint().equals(configured.fingerprint()));
        node.put("offset", entry.offset());
        node.put("writtenAt", entry.writtenAt() == null ? null : StateText.iso(entry.writtenAt()));
        node.put("recordTimestamp", StateText.iso(entry.timestamp()));
        return text(node);
    }

    /** The writer's time; a state written before format version 2 shows its record timestamp, marked with '~'. */
    private static String writtenAtText(ChangelogEntry entry) {
        Long writtenAt = entry.writtenAt();
        return writtenAt == null ? "~" + StateText.iso(entry.timestamp()) : StateText.iso(writtenAt);
    }

    private static String historyJson(ChangelogEntry entry, StateChange change) {
        ObjectNode node = JSON.createObjectNode();
        node.put("partition", entry.key());
        node.put("offset", entry.offset());
        node.put("writtenAt", entry.writtenAt());
        node.put("recordTimestamp", entry.timestamp());
        WorkerState s = entry.state();
        if (s == null) {
            node.putNull("state");
        } else {
            node.put("layoutFingerprint", s.layoutFingerprint());
            node.put("workerId", s.workerId());
            node.put("epoch", s.epoch());
            node.put("holder", s.holder());
            node.put("acquiredAt", s.acquiredAt());
            node.put("heartbeatAt", s.heartbeatAt());
            node.put("lastId", s.lastId());
            node.put("reservedUntil", s.reservedUntil());
        }
        change.kinds().forEach(node.putArray("changes")::add);
        node.put("change", change.description());
        return text(node);
    }

    private static String text(ObjectNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot format JSON", e);
        }
    }
}
