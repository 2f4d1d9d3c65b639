package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The id.mode and sequence.* keys. */
class SequenceSettingsTest {

    private static SnowstampConfig config(String... pairs) {
        return SnowstampConfigTest.config(pairs);
    }

    @Test
    void shouldDefaultToSnowflakeModeAndKeyTags() {
        SnowstampConfig config = config();

        assertThat(config.idMode()).isEqualTo(SnowstampConfig.IdMode.SNOWFLAKE);
        assertThat(config.sequence()).isEqualTo(new SequenceSettings(null, false, 1, 1000, "snowstamp-tags", Duration.ofSeconds(30)));
        assertThat(config.sequence().tagSource()).isEqualTo("key");
        assertThat(config.describeMasked()).doesNotContain("id.mode", "tag-source");
    }

    @Test
    void shouldParseEverySequenceKey() {
        SnowstampConfig config = config("id.mode", "Sequence", "sequence.tag-source", "field:biz_tag", "sequence.auto-create", "true",
                "sequence.default-start", "1001", "sequence.default-step", "50", "sequence.tags-topic", "my-tags",
                "sequence.checkpoint-interval", "5s");

        assertThat(config.idMode()).isEqualTo(SnowstampConfig.IdMode.SEQUENCE);
        assertThat(config.sequence()).isEqualTo(new SequenceSettings("biz_tag", true, 1001, 50, "my-tags", Duration.ofSeconds(5)));
        assertThat(config.sequence().tagSource()).isEqualTo("field:biz_tag");
        assertThat(config.describeMasked()).contains(" id.mode=sequence tag-source=field:biz_tag auto-create=true default-start=1001"
                + " default-step=50 tags-topic=my-tags");
    }

    static Stream<Arguments> invalidValues() {
        return Stream.of(
                Arguments.of("id.mode", "segment", "one of snowflake, sequence"),
                Arguments.of("sequence.tag-source", "value", "key, or field:NAME with a JSON field name of 1-200 characters"),
                Arguments.of("sequence.tag-source", "field:", "key, or field:NAME with a JSON field name of 1-200 characters"),
                Arguments.of("sequence.tag-source", "field:" + "f".repeat(201), "key, or field:NAME with a JSON field name of 1-200 characters"),
                Arguments.of("sequence.auto-create", "yes", "true or false"),
                Arguments.of("sequence.default-start", "-1", "a whole number 0..4611686018427387904"),
                Arguments.of("sequence.default-step", "0", "a whole number 1..1000000000"),
                Arguments.of("sequence.default-step", "1000000001", "a whole number 1..1000000000"),
                Arguments.of("sequence.tags-topic", "my tags", "a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)"),
                Arguments.of("sequence.checkpoint-interval", "50ms", "100ms..1h, " + Durations.ACCEPTED));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("invalidValues")
    void shouldRefuseAnInvalidValueNamingKeyValueAndAcceptedRange(String key, String value, String accepted) {
        assertThatThrownBy(() -> config(key, value))
                .isInstanceOf(ConfigException.class)
                .hasMessage(key + "=" + value + " is invalid: accepted " + accepted);
    }

    @Test
    void shouldRefuseATagsTopicThatIsAlsoADataTopicInSequenceMode() {
        for (String topic : new String[] {"events.raw", "events.stamped", "events.dlq"}) {
            assertThatThrownBy(() -> config("id.mode", "sequence", "sequence.tags-topic", topic))
                    .hasMessage("sequence.tags-topic=" + topic + " is invalid: accepted a topic other than input.topic, output.topic"
                            + " and dlq.topic");
            assertThat(config("sequence.tags-topic", topic).sequence().tagsTopic()).as("snowflake mode ignores it").isEqualTo(topic);
        }
    }

    @Test
    void shouldRefuseTheCompactHeaderFormatInSequenceMode() {
        assertThatThrownBy(() -> config("id.mode", "sequence", "stamp.header-format", "compact"))
                .hasMessage("stamp.header-format=compact is invalid: accepted text with mode=sequence (its numbers and provenance"
                        + " stay text)");
        assertThatThrownBy(() -> config("stamp.header-format", "binary"))
                .hasMessage("stamp.header-format=binary is invalid: accepted one of text, compact");
        assertThat(config("stamp.header-format", "Compact").stamp().headerFormat()).isEqualTo(StampSettings.HeaderFormat.COMPACT);
    }

    @Test
    void shouldRefuseATagFieldThatIsAlsoTheStampField() {
        assertThatThrownBy(() -> config("id.mode", "sequence", "sequence.tag-source", "field:id", "stamp.json-field", "id"))
                .hasMessage("sequence.tag-source=field:id is invalid: accepted a field other than stamp.json-field (id): the number"
                        + " would replace the tag");
    }
}
