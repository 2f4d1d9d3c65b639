package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ImportPlan;
import io.snowstamp.recovery.StateFile;
import io.snowstamp.recovery.StateImport;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.WorkerState;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code changelog import}: parses, calls {@link StateImport} (every check and the write), prints the plan. */
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
final class ChangelogImportCommand extends ChangelogCommand.Subcommand implements Callable<Integer> {
    @Option(names = "--file", paramLabel = "F", required = true, description = "export file to read ('-' = stdin)")
    String file;

    @Option(names = "--dry-run", description = "check and print what would change; write nothing")
    boolean dryRun;

    @Override
    public Integer call() throws IOException {
        StateFile export = read(file);
        PrintWriter out = spec.commandLine().getOut();
        try (KafkaOptions.Connection connection = connect();
             Admin admin = Admin.create(KafkaSettings.client(connection.config().connection()))) {
            SnowstampConfig config = connection.config();
            StateImport importer = new StateImport(admin, KafkaSettings.consumer(config.connection()),
                    KafkaSettings.producer(config.connection()), target.limit);
            StateImport.Prepared prepared = importer.prepare(export, config.connection().applicationId(), config.topics().input(),
                    config.ids().layout(), config.ids().workerOffset(), dryRun);
            String topic = prepared.topic();
            out.println((dryRun ? "dry run: " : "") + "import " + (file.equals("-") ? "stdin" : file) + " (application "
                    + export.header().applicationId() + ", exported " + export.header().exportedAt() + ") into " + topic
                    + (prepared.topicExists() ? "" : " (does not exist yet: created compacted with " + prepared.partitions() + " partitions)"));
            printPlan(prepared.plan(), config.ids().layout(), out);
            List<String> members = prepared.activeMembers();
            if (!members.isEmpty()) {
                out.println("dry run: application " + config.connection().applicationId() + " is running (" + members.size() + " active member"
                        + (members.size() == 1 ? "" : "s") + "): stop every instance before the real import");
            }
            int writes = prepared.plan().writes().size();
            if (writes == 0) {
                out.println("nothing to write: " + topic + " already holds this state");
            } else if (dryRun) {
                out.println("dry run: " + writes + " partition" + (writes == 1 ? "" : "s")
                        + " would be written to " + topic + "; nothing written");
            } else {
                int written = importer.write(prepared);
                out.println("imported " + written + " partition" + (written == 1 ? "" : "s") + " into " + topic);
            }
            out.flush();
            return 0;
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
