package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.id.IdLayout;
import io.snowstamp.testing.TestConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each slice validates its own keys when built on its own, with the messages of the whole configuration. */
class ConfigSlicesTest {

    @Test
    void shouldRefuseTopicsThatCollideInTheTopicSlice() {
        assertThatThrownBy(() -> new TopicSettings("a", "a", "d"))
                .hasMessage("output.topic=a is invalid: accepted a topic other than input.topic");
        assertThatThrownBy(() -> new TopicSettings("a", "b", "b"))
                .hasMessage("dlq.topic=b is invalid: accepted a topic other than input.topic and output.topic");
        assertThat(new TopicSettings("a", "b", "d").contains("d")).isTrue();
    }

    @Test
    void shouldRefuseAWorkerOffsetOutsideTheLayoutInTheIdSlice() {
        IdLayout layout = IdLayout.preset("snowflake");
        assertThatThrownBy(() -> new IdSettings(layout, 0, 1024, Duration.ofSeconds(10), IdSettings.OnExcessLead.CONTINUE,
                Duration.ofSeconds(1), Duration.ofSeconds(5)))
                .hasMessage("id.worker-offset=1024 is invalid: accepted 0..1023 (the layout has 10 worker bits)");
        IdSettings ids = new IdSettings(layout, 0, 3, Duration.ofSeconds(10), IdSettings.OnExcessLead.CONTINUE,
                Duration.ofSeconds(1), Duration.ofSeconds(5));
        assertThat(ids.withWorkerOffset(40).workerFor(2)).isEqualTo(42);
    }

    @Test
    void shouldRefuseABadInstanceIdInTheConnectionSliceAndKeepItsKafkaMapImmutable() {
        assertThatThrownBy(() -> new ConnectionSettings("app", "my host", Path.of("d"), ConnectionSettings.Guarantee.EXACTLY_ONCE_V2,
                ConnectionSettings.Profile.DEFAULT, Map.of()))
                .hasMessage("instance.id=my host is invalid: accepted 1-100 of a-z A-Z 0-9 . _ -");
        ConnectionSettings connection = new ConnectionSettings("app", "box-1", Path.of("d"), ConnectionSettings.Guarantee.EXACTLY_ONCE_V2,
                ConnectionSettings.Profile.DEFAULT, Map.of("max.request.size", "2048"));
        assertThat(connection.maxRequestSize()).isEqualTo(2048);
        assertThat(connection.withBootstrapServers("k:1").kafka())
                .containsEntry("bootstrap.servers", "k:1").containsEntry("max.request.size", "2048");
    }

    @Test
    void shouldChangeOnlyItsSliceInACopy() {
        SnowstampConfig config = TestConfig.of(Keys.INSTANCE_ID, "t", Keys.STAMP_JSON_FIELD, "id");
        SnowstampConfig granted = config.withWorkerOffset(7);
        assertThat(granted.ids().workerOffset()).isEqualTo(7);
        assertThat(granted).usingRecursiveComparison().ignoringFields("ids").isEqualTo(config);
        SnowstampConfig started = config.withBootstrapServers("k:9092");
        assertThat(started).usingRecursiveComparison().ignoringFields("connection").isEqualTo(config);
    }
}
