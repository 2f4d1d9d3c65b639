package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "topics", header = "Creates the topics declared in topics/ and reports drift.",
        description = "Topic files live in topics/, one NAME.properties per topic.",
        footer = {"", "Example:", "  snowstamp topics apply --check"},
        subcommands = TopicsCommand.Apply.class)
final class TopicsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.usageError(spec);
    }

    @Command(name = "apply", header = "Creates missing topics from their files; reports drift.",
            description = "Creates the topics of --dir (one NAME.properties per topic: partitions, replication.factor, "
                + "topic configs) that do not exist, and reports drift of those that do: one line per topic, 'created', "
                + "'ok' or 'drift', with the replication chosen or found. replication.factor=auto (the default) gives "
                + "min(3, brokers) replicas and min.insync.replicas=2 from 3 replicas on (1 below); -1 leaves it to the "
                + "broker's default.replication.factor; a number is taken as it is, with the min.insync.replicas that goes "
                + "with it unless the file sets one. An existing topic is never changed: fewer replicas than wanted, or a "
                + "lower min.insync.replicas than goes with its replicas, is drift. The configured input, output and dead-letter topics "
                + "are created too, from the events.raw / events.stamped / events.dlq files, when no file names "
                + "them (in sequence mode also the tags topic, from snowstamp-tags; in snowflake mode the worker registry, from snowstamp-workers). Without a topics/ directory "
                + "the files bundled in the jar are used. Exit 1 on drift with "
                + "--check.",
            footer = {"", "Examples:", "  snowstamp topics apply", "  snowstamp topics apply --bootstrap-servers kafka:9092 --dir topics --check"})
    static final class Apply implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Option(names = "--dir", paramLabel = "DIR", defaultValue = "topics", description = "topic files (default: ${DEFAULT-VALUE})")
        Path dir;

        @Option(names = "--check", description = "exit 1 if any existing topic drifts from its file")
        boolean check;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
                description = "give up if Kafka does not answer a request in this time (default: ${DEFAULT-VALUE})")
        Duration limit;

        @Override
        public Integer call() {
            SnowstampConfig loaded = options.load();
            try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit)) {
                List<String> report = apply(connection.config(), dir, limit);
                report.forEach(spec.commandLine().getOut()::println);
                return check && report.stream().anyMatch(line -> line.startsWith("drift")) ? 1 : 0;
            }
        }
    }

    /** Applies the topic files plus the configured input, output and dead-letter topics; each request within {@code limit}. */
    static List<String> apply(SnowstampConfig config, Path dir, Duration limit) {
        List<TopicSpec> specs = new ArrayList<>(TopicSpec.load(dir));
        List<TopicSpec> wanted = new ArrayList<>(specs);
        addIfMissing(wanted, TopicSpec.named(specs, config.topics().input(), "events.raw"));
        addIfMissing(wanted, TopicSpec.named(specs, config.topics().output(), "events.stamped"));
        addIfMissing(wanted, TopicSpec.named(specs, config.topics().dlq(), "events.dlq"));
        if (config.idMode() == SnowstampConfig.IdMode.SEQUENCE) {
            addIfMissing(wanted, TopicSpec.named(specs, config.sequence().tagsTopic(), "snowstamp-tags"));
        } else if (config.registry().enabled()) {
            addIfMissing(wanted, TopicSpec.named(specs, config.registry().topic(), "snowstamp-workers"));
        }
        Properties props = KafkaSettings.client(config.connection());
        // the Admin client refuses an API timeout below its request timeout (30 s by default): bound both
        String millis = Long.toString(Math.max(1, limit.toMillis()));
        props.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, millis);
        props.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, millis);
        try (Admin admin = Admin.create(props)) {
            return TopicAdmin.apply(admin, wanted);
        }
    }

    private static void addIfMissing(List<TopicSpec> specs, TopicSpec spec) {
        if (specs.stream().noneMatch(s -> s.name().equals(spec.name()))) {
            specs.add(spec);
        }
    }
}
