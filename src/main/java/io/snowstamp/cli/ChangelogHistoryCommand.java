package io.snowstamp.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.node.NullNode;
import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ChangelogEntry;
import io.snowstamp.recovery.ChangelogReader;
import io.snowstamp.recovery.ChangelogUnavailableException;
import io.snowstamp.recovery.StateChange;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateJson;
import io.snowstamp.stream.Names;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code changelog history}: every changelog record with what changed, as a table or JSON lines. */
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
final class ChangelogHistoryCommand extends ChangelogCommand.Subcommand implements Callable<Integer> {
    @Option(names = "--partition", paramLabel = "P", description = "only this partition (default: all)")
    Integer partition;

    @Option(names = "--format", paramLabel = "F", defaultValue = "table",
            description = "table (for a terminal) or json (one object per line) (default: ${DEFAULT-VALUE})")
    ChangelogCommand.Format format;

    @Override
    public Integer call() {
        Duration limit = target.limit;
        PrintWriter out = spec.commandLine().getOut();
        try (KafkaOptions.Connection connection = connect()) {
            SnowstampConfig config = connection.config();
            IdLayout configured = config.ids().layout();
            String application = config.connection().applicationId();
            Map<Integer, WorkerState> previous = new HashMap<>();
            TextTable table = new TextTable("partition", "offset", "writtenAt", "epoch", "holder", "change");
            long[] count = {0};
            ChangelogReader.read(KafkaSettings.consumer(config.connection()), application, partition, limit, entry -> {
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
                if (format == ChangelogCommand.Format.json) {
                    out.println(JsonText.of(JsonLine.of(entry, change)));
                } else {
                    table.add(entry.key(), entry.offset(), writtenAtText(entry),
                            state == null ? "-" : state.epoch(), state == null || state.holder().isEmpty() ? "-" : state.holder(),
                            change.description());
                }
            });
            if (count[0] == 0) {
                String topic = Names.changelogTopic(application);
                if (partition == null) {
                    throw new ChangelogUnavailableException(topic, application, ChangelogUnavailableException.Reason.EMPTY);
                }
                throw new SnowstampException("partition " + partition + " of changelog topic " + topic
                        + " is empty: no task of application " + application + " has run for it");
            }
            if (format == ChangelogCommand.Format.table) {
                table.print(out);
            }
            out.flush();
            return 0;
        }
    }

    /** The writer's time; a state written before format version 2 shows its record timestamp, marked with '~'. */
    private static String writtenAtText(ChangelogEntry entry) {
        Long writtenAt = entry.writtenAt();
        return writtenAt == null ? "~" + StateText.iso(entry.timestamp()) : StateText.iso(writtenAt);
    }

    /**
     * One line of {@code --format json}: where the record is, then the state's own JSON view
     * ({@link WorkerStateJson}, unwrapped), or {@code "state":null} for a deletion, then what changed.
     */
    record JsonLine(int partition, long offset, Long writtenAt, long recordTimestamp,
                    @JsonProperty("state") @JsonInclude(JsonInclude.Include.NON_NULL) NullNode deleted,
                    @JsonUnwrapped WorkerStateJson fields, List<String> changes, String change) {

        static JsonLine of(ChangelogEntry entry, StateChange change) {
            WorkerState s = entry.state();
            return new JsonLine(entry.key(), entry.offset(), entry.writtenAt(), entry.timestamp(),
                    s == null ? NullNode.getInstance() : null, s == null ? null : WorkerStateJson.of(s),
                    List.copyOf(change.kinds()), change.description());
        }
    }
}
