package io.snowstamp.cli;

import io.snowstamp.config.Keys;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "changelog", header = "Reads and writes the worker-state changelog: inspect, history, export, import.",
        description = "The worker-state changelog <application.id>-worker-state-changelog is snowstamp's recovery file: "
                + "per input partition, the worker lease (epoch, holder, heartbeat) and the high-water mark (lastId, "
                + "reservedUntil). These commands replay it with a plain consumer (read_committed, no consumer group, "
                + "up to the end offsets taken when the read starts), so they work while the stamper is stopped.",
        footer = {"", "Example:", "  snowstamp changelog inspect --application-id orders"},
        subcommands = {ChangelogInspectCommand.class, ChangelogHistoryCommand.class, ChangelogExportCommand.class,
                ChangelogImportCommand.class})
final class ChangelogCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.usageError(spec);
    }

    /** Output of inspect and history (and of recover and workers). */
    enum Format { table, json }

    /** The application whose changelog is read, and how long reading may take: an option mixin of every subcommand. */
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
    }

    /**
     * The options every subcommand has (connection, configuration, {@code --application-id}, {@code --timeout}),
     * inherited by picocli from this superclass.
     */
    abstract static class Subcommand {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Mixin
        Target target;

        /**
         * Loads the configuration with {@code --application-id} and connects within {@code --timeout}: an
         * unreachable cluster fails in seconds, naming it.
         */
        KafkaOptions.Connection connect() {
            return options.connect(options.load(target.flags()), 0, target.limit);
        }
    }
}
