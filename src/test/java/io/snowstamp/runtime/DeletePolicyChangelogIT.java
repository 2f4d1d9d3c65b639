package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The start's topic check ({@link TopicPreflight}) refuses a state changelog whose cleanup policy deletes: retention would
 * remove the newest record of a quiet partition (its lease and high-water mark) or of a quiet tag (its segment), and the
 * next owner would resume below what was issued. Kafka Streams creates the changelog compacted, but accepts an existing
 * one made by hand, or altered, as it is. In both modes; a compacted one starts.
 */
@Tag("integration")
class DeletePolicyChangelogIT extends OnSharedBroker {

    @ParameterizedTest
    @CsvSource({"snowflake,delete", "snowflake,'compact,delete'", "sequence,delete", "sequence,'compact,delete'"})
    void shouldRefuseToStartOnAStateChangelogWhosePolicyDeletes(String mode, String policy) throws Exception {
        SnowstampConfig config = setUp(mode, policy);

        assertThatThrownBy(() -> TopicPreflight.check(config)).isInstanceOf(SnowstampException.class)
                .hasMessageContaining("cleanup.policy=" + policy + "; accepted: compact")
                .hasMessageContaining("--add-config cleanup.policy=compact");
    }

    @ParameterizedTest
    @CsvSource({"snowflake", "sequence"})
    void shouldStartOnACompactedStateChangelog(String mode) throws Exception {
        SnowstampConfig config = setUp(mode, "compact");

        assertThatCode(() -> TopicPreflight.check(config)).doesNotThrowAnyException();
    }

    /**
     * Sequence mode reads the output to learn the numbers issued since the last checkpoint; compaction could drop a tag's
     * highest one there. Refused with the tail guard, accepted without it (the output is not read).
     */
    @ParameterizedTest
    @CsvSource({"compact,true", "'compact,delete',true", "compact,false"})
    void shouldRefuseACompactedOutputInSequenceModeWithTheTailGuard(String policy, boolean tailGuard) throws Exception {
        SnowstampConfig config = setUp("sequence", "compact", policy, tailGuard);

        if (tailGuard) {
            assertThatThrownBy(() -> TopicPreflight.check(config)).isInstanceOf(SnowstampException.class)
                    .hasMessageContaining("has cleanup.policy=" + policy + "; accepted in sequence mode: delete")
                    .hasMessageContaining("--add-config cleanup.policy=delete");
        } else {
            assertThatCode(() -> TopicPreflight.check(config)).doesNotThrowAnyException();
        }
    }

    private SnowstampConfig setUp(String mode, String policy) throws Exception {
        return setUp(mode, policy, "delete", true);
    }

    /** The topics of a new application whose state changelog exists with {@code policy}; its configuration. */
    private SnowstampConfig setUp(String mode, String policy, String outputPolicy, boolean tailGuard) throws Exception {
        String app = TestBroker.unique("policy");
        boolean sequence = mode.equals("sequence");
        String changelog = sequence ? SequenceNames.changelogTopic(app) : Names.changelogTopic(app);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            List<NewTopic> topics = new java.util.ArrayList<>();
            for (String topic : List.of(app + "-in", app + "-dlq", app + "-tags")) {
                topics.add(new NewTopic(topic, 2, (short) 1));
            }
            topics.add(new NewTopic(app + "-out", 2, (short) 1).configs(Map.of("cleanup.policy", outputPolicy)));
            topics.add(new NewTopic(changelog, 2, (short) 1).configs(Map.of("cleanup.policy", policy)));
            admin.createTopics(topics).all().get();
            // created is not yet visible to every client: the check's own admin client must find them all
            long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            List<String> names = topics.stream().map(NewTopic::name).toList();
            while (!admin.listTopics().names().get().containsAll(names)
                    || admin.describeTopics(names).allTopicNames().get().values().stream().anyMatch(d -> d.partitions().isEmpty())) {
                assertThat(System.nanoTime()).as("topics visible within 30 s").isLessThan(until);
                Thread.sleep(100);
            }
        }
        Map<String, String> settings = new HashMap<>(Map.of("kafka.bootstrap.servers", broker.bootstrapServers(), "application.id", app,
                "input.topic", app + "-in", "output.topic", app + "-out", "dlq.topic", app + "-dlq"));
        if (sequence) {
            settings.put("id.mode", "sequence");
            settings.put("sequence.tags-topic", app + "-tags");
        }
        settings.put("recovery.tail-guard", Boolean.toString(tailGuard));
        return ConfigLoader.load(null, Map.of(), settings);
    }
}
