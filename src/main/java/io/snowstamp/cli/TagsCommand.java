package io.snowstamp.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.snowstamp.SnowstampException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SequenceSettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.sequence.TagAdmin;
import io.snowstamp.sequence.TagDefinition;
import io.snowstamp.sequence.Tags;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "tags", header = "Creates, changes and lists the tags of sequence mode.",
        description = "Tags of sequence mode (id.mode=sequence) are records of the compacted tags topic "
                + "(sequence.tags-topic), read by the stamper as a global table.",
        footer = {"", "Example:", "  snowstamp tags create orders --start 1000 --step 500"},
        subcommands = {TagsCommand.Create.class, TagsCommand.SetStep.class, TagsCommand.ListTags.class})
final class TagsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.usageError(spec);
    }

    @Command(name = "create", header = "Registers a tag with its first number and step.",
            description = "Registers TAG in the tags topic (created from topics/ if missing) with its first number and "
                    + "its step (numbers reserved per state write). Refused when the tag is registered already. A tag "
                    + "never goes back: if the stamper already numbered it (for example auto-created), numbering "
                    + "continues after its last number whatever --start says.",
            footer = {"", "Examples:", "  snowstamp tags create orders", "  snowstamp tags create invoices --start 100000 --step 100"})
    static final class Create implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Parameters(index = "0", paramLabel = "TAG", description = "1-200 characters, no control characters")
        String tag;

        @Option(names = "--start", paramLabel = "N", description = "first number (default: sequence.default-start)")
        Long start;

        @Option(names = "--step", paramLabel = "S", description = "numbers per segment, 1.." + SequenceSettings.MAX_STEP
                + " (default: sequence.default-step)")
        Long step;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
                description = "give up reading the tags topic after this long (default: ${DEFAULT-VALUE})")
        Duration limit;

        @Override
        public Integer call() {
            checkTag(spec, tag);
            SnowstampConfig loaded = options.load();
            long first = start == null ? loaded.sequence().defaultStart() : start;
            long size = step == null ? loaded.sequence().defaultStep() : step;
            if (first < 0 || first > SequenceSettings.MAX_START) {
                throw new ParameterException(spec.commandLine(), "--start=" + first + " is invalid: accepted 0.." + SequenceSettings.MAX_START);
            }
            checkStep(spec, "--step", size);
            try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit)) {
                SnowstampConfig config = connection.config();
                ensureTagsTopic(config);
                TagDefinition existing = registry(config, limit, spec).get(tag);
                if (existing != null) {
                    throw new SnowstampException("tag '" + tag + "' is registered already (start " + existing.start() + ", step "
                            + existing.step() + ", revision " + existing.revision() + "); change its step with 'snowstamp tags set-step'");
                }
                TagDefinition definition = new TagDefinition(first, size, 1, System.currentTimeMillis());
                TagAdmin.write(KafkaSettings.producer(config.connection()), config.sequence().tagsTopic(), tag, definition);
                spec.commandLine().getOut().println("created " + tag + " start=" + first + " step=" + size + " revision=1");
                return 0;
            }
        }
    }

    @Command(name = "set-step", header = "Changes the step of a tag, from its next segment on.",
            description = "Writes a new revision of TAG's definition with STEP. Each task applies it from the tag's "
                    + "next reservation, made when half of its current segment is used (the numbers already reserved "
                    + "are issued first), so the change neither skips nor repeats a number.",
            footer = {"", "Example:", "  snowstamp tags set-step orders 5000"})
    static final class SetStep implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Parameters(index = "0", paramLabel = "TAG", description = "a registered tag")
        String tag;

        @Parameters(index = "1", paramLabel = "STEP", description = "numbers per segment, 1.." + SequenceSettings.MAX_STEP)
        long step;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
                description = "give up reading the tags topic after this long (default: ${DEFAULT-VALUE})")
        Duration limit;

        @Override
        public Integer call() {
            checkTag(spec, tag);
            checkStep(spec, "STEP", step);
            SnowstampConfig loaded = options.load();
            try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit)) {
                SnowstampConfig config = connection.config();
                TagDefinition existing = registry(config, limit, spec).get(tag);
                if (existing == null) {
                    throw new SnowstampException("tag '" + tag + "' is not registered in " + config.sequence().tagsTopic()
                            + "; register it with 'snowstamp tags create " + tag + "'");
                }
                PrintWriter out = spec.commandLine().getOut();
                if (existing.step() == step) {
                    out.println("unchanged " + tag + " step=" + step + " revision=" + existing.revision());
                    return 0;
                }
                TagDefinition changed = existing.withStep(step, System.currentTimeMillis());
                TagAdmin.write(KafkaSettings.producer(config.connection()), config.sequence().tagsTopic(), tag, changed);
                out.println("changed " + tag + " step=" + step + " (was " + existing.step() + ") revision=" + changed.revision()
                        + "; applies from the tag's next segment");
                return 0;
            }
        }
    }

    @Command(name = "list", header = "Lists the tags with their step and reserved max_id.",
            description = "Prints one JSON object per tag, sorted: {\"tag\",\"registered\",\"start\",\"step\",\"revision\","
                    + "\"max_id\",\"issued\",\"partition\"}. The definition comes from the tags topic; max_id — the highest "
                    + "number reserved, so every number issued is at most max_id — and issued — the last number issued as "
                    + "the changelog names it: exactly that after a clean stop, at most that while the stamper runs — from "
                    + "the changelog of the application's sequence-segments store (read_committed, to its end; null before "
                    + "the tag's first record). Tags "
                    + "numbered without being registered (auto-created) have registered=false. Works whether or not the "
                    + "stamper runs.",
            footer = {"", "Examples:", "  snowstamp tags list", "  snowstamp tags list --application-id orders-numberer --timeout 30s"})
    static final class ListTags implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Option(names = "--application-id", paramLabel = "ID", description = "same as --set application.id=ID: whose changelog"
                + " to read max_id from (default: application.id)")
        String applicationId;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
                description = "give up reading a topic to its end after this long (default: ${DEFAULT-VALUE})")
        Duration limit;

        @Override
        public Integer call() {
            SnowstampConfig loaded = options.load(applicationId == null ? Map.of() : Map.of(Keys.APPLICATION_ID, applicationId));
            try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit)) {
                PrintWriter out = spec.commandLine().getOut();
                SnowstampConfig config = connection.config();
                Map<String, TagDefinition> registry = registry(config, limit, spec);
                var segments = TagAdmin.segments(KafkaSettings.consumer(config.connection()),
                        SequenceNames.changelogTopic(config.connection().applicationId()), limit, warnings(spec));
                int partitions;
                try (Admin admin = Admin.create(KafkaSettings.client(config.connection()))) {
                    partitions = TopicAdmin.partitions(admin, config.topics().output()).orElse(-1);
                }
                for (TagAdmin.Listed listed : TagAdmin.list(registry, segments, partitions)) {
                    out.println(json(listed));
                }
                return 0;
            }
        }

        private static String json(TagAdmin.Listed listed) {
            TagDefinition definition = listed.definition();
            return JsonText.of(new TagLine(listed.tag(), definition != null,
                    definition == null ? null : definition.start(),
                    definition == null ? null : definition.step(),
                    definition == null ? null : definition.revision(),
                    listed.segment() == null ? null : listed.segment().maxId(),
                    listed.segment() == null || listed.segment().issued() < 0 ? null : listed.segment().issued(),
                    listed.partition() < 0 ? null : listed.partition()));
        }

        /** One line of {@code tags list}; null where the tag has no definition, segment or partition yet. */
        record TagLine(String tag, boolean registered, Long start, Long step, Long revision,
                       @JsonProperty("max_id") Long maxId, Long issued, Integer partition) {
        }
    }

    private static void checkTag(CommandSpec spec, String tag) {
        String problem = Tags.problem(tag);
        if (problem != null) {
            throw new ParameterException(spec.commandLine(), "TAG '" + tag + "' is invalid: " + problem);
        }
    }

    private static void checkStep(CommandSpec spec, String name, long step) {
        if (step < 1 || step > SequenceSettings.MAX_STEP) {
            throw new ParameterException(spec.commandLine(), name + "=" + step + " is invalid: accepted 1.." + SequenceSettings.MAX_STEP);
        }
    }

    /** The registered tags; an unreadable definition is skipped with a warning on stderr. */
    private static Map<String, TagDefinition> registry(SnowstampConfig config, Duration limit, CommandSpec spec) {
        return TagAdmin.registry(KafkaSettings.consumer(config.connection()), config.sequence().tagsTopic(), limit, warnings(spec));
    }

    private static java.util.function.Consumer<String> warnings(CommandSpec spec) {
        return line -> spec.commandLine().getErr().println("warning: " + line);
    }

    /** Creates the tags topic from its file (topics/ or the bundled one) when it does not exist yet. */
    private static void ensureTagsTopic(SnowstampConfig config) {
        String topic = config.sequence().tagsTopic();
        TopicSpec spec = TopicSpec.named(TopicSpec.load(Path.of("topics")), topic, "snowstamp-tags");
        try (Admin admin = Admin.create(KafkaSettings.client(config.connection()))) {
            if (TopicAdmin.partitions(admin, topic).isEmpty()) {
                TopicAdmin.apply(admin, List.of(spec));
            }
        }
    }
}
