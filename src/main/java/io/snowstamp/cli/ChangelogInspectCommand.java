package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ChangelogEntry;
import io.snowstamp.recovery.ChangelogReader;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.WorkerState;
import io.snowstamp.stream.Names;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code changelog inspect}: the newest state of every partition, as a table or JSON lines. */
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
final class ChangelogInspectCommand extends ChangelogCommand.Subcommand implements Callable<Integer> {
    @Option(names = "--format", paramLabel = "F", defaultValue = "table",
            description = "table (for a terminal) or json (one object per line) (default: ${DEFAULT-VALUE})")
    ChangelogCommand.Format format;

    @Override
    public Integer call() {
        Duration limit = target.limit;
        try (KafkaOptions.Connection connection = connect()) {
            SnowstampConfig config = connection.config();
            Map<Integer, ChangelogEntry> latest = ChangelogReader.latest(KafkaSettings.consumer(config.connection()),
                    config.connection().applicationId(), limit);
            print(config, latest, System.currentTimeMillis(), spec.commandLine().getOut(), spec.commandLine().getErr());
            return 0;
        }
    }

    private void print(SnowstampConfig config, Map<Integer, ChangelogEntry> latest, long now, PrintWriter out, PrintWriter err) {
        IdLayout configured = config.ids().layout();
        List<String> warnings = StateText.layoutWarnings(latest, configured);
        if (format == ChangelogCommand.Format.json) {
            latest.values().forEach(entry -> out.println(JsonText.of(JsonLine.of(entry, configured, now))));
            warnings.forEach(w -> err.println("warning: " + w));
            out.flush();
            err.flush();
            return;
        }
        out.println("changelog " + Names.changelogTopic(config.connection().applicationId()) + ": " + latest.size() + " partition"
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

    /** One line of {@code --format json}, in the order the help text lists (times ISO-8601 UTC, null when none). */
    record JsonLine(int partition, long workerId, long epoch, String holder, String acquiredAt, String heartbeatAt,
                    Long heartbeatAgoMillis, long lastId, String lastIdTime, long reservedUntil, String reservedUntilTime,
                    Long leadMillis, String layoutFingerprint, boolean layoutMatches, long offset, String writtenAt,
                    String recordTimestamp) {

        static JsonLine of(ChangelogEntry entry, IdLayout configured, long now) {
            WorkerState s = entry.state();
            IdLayout layout = StateText.layoutOf(s, configured);
            Long lastMillis = StateText.idMillis(layout, s.lastId());
            Long reservedMillis = StateText.idMillis(layout, s.reservedUntil());
            return new JsonLine(entry.key(), s.workerId(), s.epoch(), s.holder(), StateText.isoOrNull(s.acquiredAt()),
                    StateText.isoOrNull(s.heartbeatAt()), s.heartbeatAt() == 0 ? null : now - s.heartbeatAt(),
                    s.lastId(), lastMillis == null ? null : StateText.iso(lastMillis),
                    s.reservedUntil(), reservedMillis == null ? null : StateText.iso(reservedMillis),
                    reservedMillis == null ? null : reservedMillis - now,
                    s.layoutFingerprint(), s.layoutFingerprint().equals(configured.fingerprint()), entry.offset(),
                    entry.writtenAt() == null ? null : StateText.iso(entry.writtenAt()), StateText.iso(entry.timestamp()));
        }
    }
}
