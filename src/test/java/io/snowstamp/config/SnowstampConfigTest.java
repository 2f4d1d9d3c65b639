package io.snowstamp.config;

import io.snowstamp.testing.TestConfig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.id.IdLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SnowstampConfigTest {

    private static final long EPOCH = IdLayout.DEFAULT_EPOCH_MILLIS;
    private static final String TOPIC = "a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)";
    private static final String UNIT = "1ms..1s, " + Durations.ACCEPTED;
    private static final String EPOCH_FORM = "an ISO-8601 instant such as 2020-01-01T00:00:00Z, or Unix milliseconds";

    /** Defaults plus a fixed instance id (the default would be the host name) plus {@code pairs}. */
    static SnowstampConfig config(String... pairs) {
        return TestConfig.base(Keys.INSTANCE_ID, "test-1").with(pairs);
    }

    static Stream<Arguments> invalidValues() {
        return Stream.of(
                Arguments.of("input.topic", "bad topic", TOPIC),
                Arguments.of("input.topic", "", TOPIC),
                Arguments.of("output.topic", "..", TOPIC),
                Arguments.of("output.topic", ".", TOPIC),
                Arguments.of("dlq.topic", "dlq/1", TOPIC),
                Arguments.of("dlq.topic", "x".repeat(250), TOPIC),
                Arguments.of("processing.guarantee", "exactly_once", "one of exactly_once_v2, at_least_once"),
                Arguments.of("id.preset", "twitter", "one of snowflake, sonyflake, butterfly, js-safe"),
                Arguments.of("id.worker-offset", "1024", "0..1023 (the layout has 10 worker bits)"),
                Arguments.of("id.worker-offset", "-1", "a whole number 0..9223372036854775807"),
                Arguments.of("id.worker-offset", "three", "a whole number 0..9223372036854775807"),
                Arguments.of("id.datacenter-id", "1", "0..0 (the layout has 0 datacenter bits)"),
                Arguments.of("id.epoch", "yesterday", EPOCH_FORM),
                Arguments.of("id.epoch", "2020-13-01T00:00:00Z", EPOCH_FORM),
                Arguments.of("id.epoch", "99999999999999999999", EPOCH_FORM),
                Arguments.of("id.time-unit", "0ms", UNIT),
                Arguments.of("id.time-unit", "2s", UNIT),
                Arguments.of("id.time-unit", "1w", UNIT),
                Arguments.of("id.time-unit", "1.5ms", UNIT),
                Arguments.of("id.time-bits", "forty", "a whole number 0..63"),
                Arguments.of("id.worker-bits", "64", "a whole number 0..63"),
                Arguments.of("id.sequence-bits", "-1", "a whole number 0..63"),
                Arguments.of("id.worker-in-low-bits", "maybe", "true or false"),
                Arguments.of("stamp.provenance", "yes", "true or false"),
                Arguments.of("stamp.provenance", "1", "true or false"),
                Arguments.of("stamp.json-type", "int", "one of number, string"),
                Arguments.of("stamp.on-existing-field", "ignore", "one of reject, overwrite, keep"),
                Arguments.of("id.max-lead", "0ms", "1ms..1d, " + Durations.ACCEPTED),
                Arguments.of("id.max-lead", "2d", "1ms..1d, " + Durations.ACCEPTED),
                Arguments.of("id.on-excess-lead", "stop", "one of continue, pause"),
                Arguments.of("id.reservation", "2h", "0ms..1h, " + Durations.ACCEPTED),
                Arguments.of("id.reservation", "-1s", "0ms..1h, " + Durations.ACCEPTED),
                Arguments.of("lease.heartbeat", "50ms", "100ms..1h, " + Durations.ACCEPTED),
                Arguments.of("recovery.tail-guard", "on", "true or false"),
                Arguments.of("recovery.tail-guard-timeout", "500ms", "1s..1h, " + Durations.ACCEPTED),
                Arguments.of("recovery.takeover-gap", "61m", "0ms..1h, " + Durations.ACCEPTED),
                Arguments.of("instance.id", "my host", "1-100 of a-z A-Z 0-9 . _ -"),
                Arguments.of("instance.id", "h".repeat(101), "1-100 of a-z A-Z 0-9 . _ -"),
                Arguments.of("instance.id", "host/1", "1-100 of a-z A-Z 0-9 . _ -"),
                Arguments.of("application.id", "my app", "1-200 of a-z A-Z 0-9 . _ -"),
                Arguments.of("output.topic", "events.raw", "a topic other than input.topic"),
                Arguments.of("dlq.topic", "events.raw", "a topic other than input.topic and output.topic"),
                Arguments.of("dlq.topic", "events.stamped", "a topic other than input.topic and output.topic"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("invalidValues")
    void shouldRefuseAnInvalidValueNamingKeyValueAndAcceptedRange(String key, String value, String accepted) {
        assertThatThrownBy(() -> config(key, value))
                .isInstanceOf(ConfigException.class)
                .hasMessage(key + "=" + value + " is invalid: accepted " + accepted);
    }

    static Stream<Arguments> invalidLayouts() {
        return Stream.of(
                // checked by IdLayout: the message has its own wording but still names key, value and range
                Arguments.of(new String[] {"id.sequence-bits", "0"}, "id.sequence-bits=0 is out of range: accepted 1..63"),
                Arguments.of(new String[] {"id.time-bits", "0"}, "id.time-bits=0 is out of range: accepted 1..63"),
                Arguments.of(new String[] {"id.worker-bits", "63"},
                        "id.time-bits+id.datacenter-bits+id.worker-bits+id.sequence-bits=41+0+63+12=116 is out of range"),
                Arguments.of(new String[] {"id.time-bits", "63"},
                        "id.time-bits+id.datacenter-bits+id.worker-bits+id.sequence-bits=63+0+10+12=85 is out of range: accepted a total <= 63"),
                Arguments.of(new String[] {"id.epoch", "1969-12-31T23:59:59Z"},
                        "id.epoch=1969-12-31T23:59:59Z (-1000 ms) is out of range: accepted 1970-01-01T00:00:00Z..9999-12-31T23:59:59.999Z"),
                Arguments.of(new String[] {"id.epoch", "253402300800000"},
                        "id.epoch=+10000-01-01T00:00:00Z (253402300800000 ms) is out of range: accepted 1970-01-01T00:00:00Z..9999-12-31T23:59:59.999Z"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("invalidLayouts")
    void shouldRefuseAnInvalidLayoutNamingKeyValueAndAcceptedRange(String[] pair, String expectedStart) {
        assertThatThrownBy(() -> config(pair))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(expectedStart);
    }

    @Test
    void shouldRefuseAWorkerOffsetBeyondTheWorkerBitsOfTheChosenPreset() {
        assertThatThrownBy(() -> config("id.preset", "js-safe", "id.worker-offset", "64"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("id.worker-offset=64 is invalid: accepted 0..63 (the layout has 6 worker bits)");
        assertThat(config("id.preset", "js-safe", "id.worker-offset", "63").ids().workerOffset()).isEqualTo(63);
        assertThat(config("id.worker-offset", "1023").ids().workerOffset()).isEqualTo(1023);
    }

    @Test
    void shouldAcceptADatacenterIdThatFitsConfiguredDatacenterBits() {
        SnowstampConfig config = config("id.datacenter-bits", "2", "id.worker-bits", "8", "id.datacenter-id", "3");

        assertThat(config.ids().datacenterId()).isEqualTo(3);
        assertThatThrownBy(() -> config("id.datacenter-bits", "2", "id.worker-bits", "8", "id.datacenter-id", "4"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("id.datacenter-id=4 is invalid: accepted 0..3 (the layout has 2 datacenter bits)");
    }

    static Stream<Arguments> layouts() {
        return Stream.of(
                Arguments.of(new String[] {}, new IdLayout(41, 0, 10, 12, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.preset", "snowflake"}, new IdLayout(41, 0, 10, 12, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.preset", "sonyflake"}, new IdLayout(39, 0, 16, 8, EPOCH, 10, true)),
                Arguments.of(new String[] {"id.preset", "butterfly"}, new IdLayout(41, 0, 13, 9, EPOCH, 1, true)),
                Arguments.of(new String[] {"id.preset", "js-safe"}, new IdLayout(41, 0, 6, 6, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.preset", " Sonyflake "}, new IdLayout(39, 0, 16, 8, EPOCH, 10, true)),
                Arguments.of(new String[] {"id.epoch", "2024-01-01T00:00:00Z"}, new IdLayout(41, 0, 10, 12, 1704067200000L, 1, false)),
                Arguments.of(new String[] {"id.epoch", "1704067200000"}, new IdLayout(41, 0, 10, 12, 1704067200000L, 1, false)),
                Arguments.of(new String[] {"id.time-unit", "10ms"}, new IdLayout(41, 0, 10, 12, EPOCH, 10, false)),
                Arguments.of(new String[] {"id.time-unit", "1s"}, new IdLayout(41, 0, 10, 12, EPOCH, 1000, false)),
                Arguments.of(new String[] {"id.time-unit", "250"}, new IdLayout(41, 0, 10, 12, EPOCH, 250, false)),
                Arguments.of(new String[] {"id.worker-in-low-bits", "TRUE"}, new IdLayout(41, 0, 10, 12, EPOCH, 1, true)),
                Arguments.of(new String[] {"id.preset", "sonyflake", "id.worker-in-low-bits", "false"},
                        new IdLayout(39, 0, 16, 8, EPOCH, 10, false)),
                Arguments.of(new String[] {"id.time-bits", "39", "id.worker-bits", "12"}, new IdLayout(39, 0, 12, 12, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.preset", "js-safe", "id.sequence-bits", "8"}, new IdLayout(41, 0, 6, 8, EPOCH, 1, false)),
                // widths that only fit together: the layout is judged once all overrides are applied
                Arguments.of(new String[] {"id.datacenter-bits", "5", "id.worker-bits", "5"}, new IdLayout(41, 5, 5, 12, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.worker-bits", "12", "id.sequence-bits", "10"}, new IdLayout(41, 0, 12, 10, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.time-bits", "42", "id.sequence-bits", "11"}, new IdLayout(42, 0, 10, 11, EPOCH, 1, false)),
                Arguments.of(new String[] {"id.preset", "sonyflake", "id.time-bits", "41", "id.worker-bits", "14", "id.time-unit", "1ms"},
                        new IdLayout(41, 0, 14, 8, EPOCH, 1, true)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("layouts")
    void shouldBuildTheLayoutFromPresetAndOverrides(String[] pairs, IdLayout expected) {
        assertThat(config(pairs).ids().layout()).isEqualTo(expected);
    }

    @Test
    void shouldParseEveryValidValue() {
        SnowstampConfig config = config(
                "application.id", "app_1.x-y",
                "input.topic", "in.1",
                "output.topic", "out_1",
                "dlq.topic", "dead-letters",
                "processing.guarantee", "at_least_once",
                "id.worker-offset", "17",
                "stamp.json-field", "  snowId ",
                "stamp.json-type", "string",
                "stamp.on-existing-field", "overwrite",
                "stamp.provenance", "False",
                "id.max-lead", "1m",
                "id.on-excess-lead", "pause",
                "id.reservation", "0",
                "lease.heartbeat", "250ms",
                "recovery.tail-guard", "false",
                "recovery.tail-guard-timeout", "2s",
                "recovery.takeover-gap", "3s",
                "recovery.stall-after", "0",
                "state.dir", "/var/lib/snowstamp",
                "kafka.bootstrap.servers", "k1:9092,k2:9092",
                "kafka.linger.ms", "20");

        assertThat(config).isEqualTo(new SnowstampConfig(
                new ConnectionSettings("app_1.x-y", "test-1", Path.of("/var/lib/snowstamp"), ConnectionSettings.Guarantee.AT_LEAST_ONCE,
                        ConnectionSettings.Profile.DEFAULT, Map.of("bootstrap.servers", "k1:9092,k2:9092", "linger.ms", "20")),
                new TopicSettings("in.1", "out_1", "dead-letters"),
                new IdSettings(IdLayout.preset("snowflake"), 0, 17, Duration.ofMinutes(1), IdSettings.OnExcessLead.PAUSE, Duration.ZERO,
                        Duration.ofMillis(250)),
                new StampSettings("snowId", StampSettings.JsonType.STRING, StampSettings.OnExistingField.OVERWRITE, 64, false,
                        StampSettings.HeaderFormat.TEXT),
                new RecoverySettings(false, Duration.ofSeconds(2), Duration.ofSeconds(3)),
                AdminSettings.off(),
                SnowstampConfig.IdMode.SNOWFLAKE,
                new SequenceSettings(null, false, 1, 1000, "snowstamp-tags", Duration.ofSeconds(30)),
                new RegistrySettings(true, "snowstamp-workers", "default", false, Duration.ofSeconds(10), Duration.ofMinutes(1), null)));
        assertThat(config.connection().embeddedBroker()).isFalse();
    }

    @Test
    void shouldDefaultTheRecoveryAndLeadSettings() {
        SnowstampConfig config = config();

        assertThat(config.ids()).isEqualTo(new IdSettings(IdLayout.preset("snowflake"), 0, 0, Duration.ofSeconds(10),
                IdSettings.OnExcessLead.CONTINUE, Duration.ofSeconds(1), Duration.ofSeconds(5)));
        assertThat(config.recovery()).isEqualTo(new RecoverySettings(true, Duration.ofSeconds(60), Duration.ZERO, Duration.ofSeconds(60)));
    }

    @Test
    void shouldDefaultTheTakeoverGapByProcessingGuarantee() {
        assertThat(config().recovery().takeoverGap()).isEqualTo(Duration.ZERO);
        assertThat(config("processing.guarantee", "at_least_once").recovery().takeoverGap()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config("processing.guarantee", "at_least_once", "recovery.takeover-gap", "0").recovery().takeoverGap())
                .isEqualTo(Duration.ZERO);
        assertThat(config("recovery.takeover-gap", "250ms").recovery().takeoverGap()).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void shouldDeriveTheWorkerOfAPartitionFromTheOffset() {
        SnowstampConfig config = config("id.worker-offset", "5");

        assertThat(config.ids().workerFor(0)).isEqualTo(5);
        assertThat(config.ids().workerFor(7)).isEqualTo(12);
    }

    @Test
    void shouldUseAnEmbeddedBrokerOnlyWithoutBootstrapServers() {
        assertThat(config().connection().embeddedBroker()).isTrue();
        assertThat(config("kafka.bootstrap.servers", "  ").connection().embeddedBroker()).isTrue();
        assertThat(config("kafka.bootstrap.servers", "k:9092").connection().embeddedBroker()).isFalse();

        SnowstampConfig started = config("kafka.linger.ms", "5").withBootstrapServers("127.0.0.1:40000");
        assertThat(started.connection().embeddedBroker()).isFalse();
        assertThat(started.connection().kafka()).containsOnly(Map.entry("bootstrap.servers", "127.0.0.1:40000"), Map.entry("linger.ms", "5"));
        assertThat(started.withBootstrapServers("x:1").connection().applicationId()).isEqualTo("snowstamp");
    }

    @Test
    void shouldKeepTheKafkaMapImmutable() {
        SnowstampConfig config = config("kafka.linger.ms", "5");

        assertThatThrownBy(() -> config.connection().kafka().put("acks", "0")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void shouldDescribeTheConfigurationWithoutSecrets() {
        String jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"svc\" password=\"hunter2\";";
        SnowstampConfig config = config(
                "kafka.bootstrap.servers", "k:9092",
                "kafka.sasl.mechanism", "PLAIN",
                "kafka.sasl.jaas.config", jaas,
                "kafka.ssl.truststore.password", "tr-pass-1",
                "kafka.ssl.keystore.password", "ks-pass-2",
                "kafka.ssl.key.password", "key-pass-3");

        String described = config.describeMasked();

        assertThat(described).doesNotContain("hunter2", "svc", "tr-pass-1", "ks-pass-2", "key-pass-3", "PlainLoginModule");
        String head = "application.id=snowstamp input=events.raw output=events.stamped dlq=events.dlq"
                + " guarantee=exactly_once_v2 layout=[time=41 bits of 1 ms since 2020-01-01T00:00:00Z, datacenter=0,"
                + " worker=10, sequence=12, worker in middle bits] worker-offset=0 datacenter-id=0"
                + " max-lead=10s/continue reservation=1s tail-guard=true takeover-gap=0ms"
                + " json-field=(header only) admin=off instance=test-1 ";
        assertThat(described).startsWith(head);
        // the kafka.* pairs come in the order of the (unordered) kafka map
        assertThat(described.substring(head.length()).split(" ")).containsExactlyInAnyOrder(
                "kafka.bootstrap.servers=k:9092",
                "kafka.sasl.jaas.config=[hidden]",
                "kafka.sasl.mechanism=PLAIN",
                "kafka.ssl.key.password=[hidden]",
                "kafka.ssl.keystore.password=[hidden]",
                "kafka.ssl.truststore.password=[hidden]");
    }

    @Test
    void shouldNameTheJsonFieldInTheDescription() {
        assertThat(config("stamp.json-field", "id").describeMasked()).contains(" json-field=id ");
    }
}
