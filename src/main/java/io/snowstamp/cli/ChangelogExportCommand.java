package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.ChangelogEntry;
import io.snowstamp.recovery.ChangelogReader;
import io.snowstamp.recovery.StateFile;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.WorkerState;
import io.snowstamp.stream.Names;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;

/** {@code changelog export}: the newest state of every partition to a versioned file ({@link StateFile}). */
@Command(name = "export", header = "Writes the current worker state to a file (JSON lines, versioned).",
        description = "Writes the newest worker state of every partition to --file: JSON lines, the first a header "
                + "{\"format\":\"snowstamp-worker-state\", \"version\":1,\"applicationId\", \"exportedAt\", \"layout\"}, "
                + "then one line per partition with every field: {\"partition\", \"layoutFingerprint\", \"workerId\", "
                + "\"epoch\", \"holder\", \"acquiredAt\", \"heartbeatAt\", \"lastId\", \"reservedUntil\"} (times as Unix "
                + "millis, -1 = no ID). 'changelog import' reads it back. The file is replaced atomically. Exit 1 if "
                + "the changelog does not exist or is empty.",
        footer = {"", "Examples:", "  snowstamp changelog export --file state.jsonl",
                "  snowstamp changelog export --application-id orders --file - | gzip > s.gz"})
final class ChangelogExportCommand extends ChangelogCommand.Subcommand implements Callable<Integer> {
    @Option(names = "--file", paramLabel = "F", required = true, description = "file to write ('-' = stdout)")
    String file;

    @Override
    public Integer call() throws IOException {
        Duration limit = target.limit;
        try (KafkaOptions.Connection connection = connect()) {
            SnowstampConfig config = connection.config();
            Map<Integer, ChangelogEntry> latest = ChangelogReader.latest(KafkaSettings.consumer(config.connection()),
                    config.connection().applicationId(), limit);
            Map<Integer, WorkerState> states = new TreeMap<>();
            latest.forEach((key, entry) -> states.put(key, entry.state()));
            Set<String> stored = new TreeSet<>();
            states.values().forEach(s -> stored.add(s.layoutFingerprint()));
            // the file's layout is the one its IDs were issued with; the configured one only if the states disagree
            String layout = stored.size() == 1 ? stored.iterator().next() : config.ids().layout().fingerprint();
            StateFile export = new StateFile(new StateFile.Header(config.connection().applicationId(),
                    StateText.iso(System.currentTimeMillis()), layout), new TreeMap<>(states));
            PrintWriter report = file.equals("-") ? spec.commandLine().getErr() : spec.commandLine().getOut();
            write(export, file, spec.commandLine().getOut());
            StateText.layoutWarnings(latest, config.ids().layout()).forEach(w -> spec.commandLine().getErr().println("warning: " + w));
            report.println("exported " + states.size() + " partition" + (states.size() == 1 ? "" : "s") + " of "
                    + Names.changelogTopic(config.connection().applicationId()) + " to " + (file.equals("-") ? "stdout" : file)
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
