package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.id.IdLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Layering of the configuration sources. Every test passes an explicit {@code --config} file:
 * with a null path the loader would read {@code ./snowstamp.properties}, which depends on where the
 * tests run.
 */
class ConfigLoaderTest {

    @TempDir
    Path dir;

    private Path file(String... lines) throws IOException {
        Path file = dir.resolve("snowstamp.properties");
        Files.write(file, java.util.List.of(lines), StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void shouldUseTheDocumentedDefaultsWhenNoSourceSetsAnything() throws IOException {
        SnowstampConfig config = ConfigLoader.load(file("instance.id=box-1"), Map.of(), Map.of());

        assertThat(config.connection().applicationId()).isEqualTo("snowstamp");
        assertThat(config.topics().input()).isEqualTo("events.raw");
        assertThat(config.topics().output()).isEqualTo("events.stamped");
        assertThat(config.topics().dlq()).isEqualTo("events.dlq");
        assertThat(config.connection().processingGuarantee()).isEqualTo(ConnectionSettings.Guarantee.EXACTLY_ONCE_V2);
        assertThat(config.ids().layout()).isEqualTo(new IdLayout(41, 0, 10, 12, 1577836800000L, 1, false));
        assertThat(config.ids().datacenterId()).isZero();
        assertThat(config.ids().workerOffset()).isZero();
        assertThat(config.stamp().jsonField()).isNull();
        assertThat(config.stamp().jsonType()).isEqualTo(StampSettings.JsonType.NUMBER);
        assertThat(config.stamp().onExistingField()).isEqualTo(StampSettings.OnExistingField.REJECT);
        assertThat(config.stamp().provenance()).isTrue();
        assertThat(config.ids().maxLead()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.ids().onExcessLead()).isEqualTo(IdSettings.OnExcessLead.CONTINUE);
        assertThat(config.ids().reservation()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.ids().heartbeat()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.recovery().tailGuard()).isTrue();
        assertThat(config.recovery().tailGuardTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(config.recovery().takeoverGap()).isEqualTo(Duration.ZERO);
        assertThat(config.connection().stateDir()).isEqualTo(Path.of("data/streams"));
        assertThat(config.connection().instanceId()).isEqualTo("box-1");
        assertThat(config.connection().kafka()).isEmpty();
        assertThat(config.connection().embeddedBroker()).isTrue();
    }

    @Test
    void shouldLayerDefaultsThenFileThenEnvironmentThenOverrides() throws IOException {
        Path file = file(
                "instance.id=from-file",
                "input.topic=file.in",
                "id.worker-offset=1",
                "application.id=from-file",
                "kafka.sasl.mechanism=GSSAPI",
                "stamp.json-field=fileField");
        Map<String, String> env = Map.of(
                "SNOWSTAMP_ID_WORKER_OFFSET", "3",
                "SNOWSTAMP_APPLICATION_ID", "from-env",
                "SNOWSTAMP_KAFKA_SASL_MECHANISM", "PLAIN",
                "SNOWSTAMP_STAMP_JSON_FIELD", "envField");
        Map<String, String> overrides = Map.of(
                "application.id", "from-cli",
                "stamp.json-field", "cliField");

        SnowstampConfig config = ConfigLoader.load(file, env, overrides);

        assertThat(config.topics().output()).as("default").isEqualTo("events.stamped");
        assertThat(config.topics().input()).as("file over default").isEqualTo("file.in");
        assertThat(config.connection().instanceId()).as("file over default").isEqualTo("from-file");
        assertThat(config.ids().workerOffset()).as("environment over file").isEqualTo(3);
        assertThat(config.connection().kafka()).as("environment over file").containsExactly(Map.entry("sasl.mechanism", "PLAIN"));
        assertThat(config.connection().applicationId()).as("overrides over environment").isEqualTo("from-cli");
        assertThat(config.stamp().jsonField()).as("overrides over environment").isEqualTo("cliField");
    }

    @Test
    void shouldMapEnvironmentVariablesToKeysIncludingKafkaKeys() throws IOException {
        Map<String, String> env = Map.of(
                "SNOWSTAMP_ID_WORKER_OFFSET", "3",
                "SNOWSTAMP_KAFKA_SASL_MECHANISM", "PLAIN",
                "SNOWSTAMP_KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
                "SNOWSTAMP_STAMP_ON_EXISTING_FIELD", "keep",
                "SNOWSTAMP_ID_PRESET", "js-safe",
                "PATH", "/usr/bin",
                "snowstamp_id_worker_offset", "9");

        SnowstampConfig config = ConfigLoader.load(file("instance.id=a"), env, Map.of());

        assertThat(config.ids().workerOffset()).isEqualTo(3);
        assertThat(config.connection().kafka()).containsOnly(
                Map.entry("sasl.mechanism", "PLAIN"),
                Map.entry("security.protocol", "SASL_SSL"));
        assertThat(config.stamp().onExistingField()).isEqualTo(StampSettings.OnExistingField.KEEP);
        assertThat(config.ids().layout()).isEqualTo(IdLayout.preset("js-safe"));
    }

    @Test
    void shouldIgnoreLoggingEnvironmentVariables() throws IOException {
        Map<String, String> env = Map.of(
                "SNOWSTAMP_LOG_LEVEL", "DEBUG",
                "SNOWSTAMP_LOG_KAFKA_LEVEL", "INFO",
                "SNOWSTAMP_LOG_WHATEVER", "x");

        SnowstampConfig config = ConfigLoader.load(file("instance.id=a"), env, Map.of());

        assertThat(config.connection().kafka()).isEmpty();
        assertThat(config.connection().applicationId()).isEqualTo("snowstamp");
    }

    @Test
    void shouldRefuseAnUnknownKeyInTheFileNamingKeyAndFile() throws IOException {
        Path file = file("instance.id=a", "id.worker_offset=3");

        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("unknown configuration key 'id.worker_offset' (from file " + file + "): accepted application.id, ")
                .hasMessageContaining("id.worker-offset")
                .hasMessageEndingWith(" and kafka.*");
    }

    @Test
    void shouldRefuseProducerAcksOtherThanAll() throws IOException {
        for (String key : java.util.List.of("kafka.acks", "kafka.producer.acks")) {
            for (String value : java.util.List.of("0", "1")) {
                Path file = file("instance.id=a", key + "=" + value);

                assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of()))
                        .isInstanceOf(ConfigException.class)
                        .hasMessageStartingWith(key + "=" + value + " is invalid: accepted all (or -1, the same)");
            }
        }
        assertThat(ConfigLoader.load(file("instance.id=a", "kafka.acks=all", "kafka.producer.acks=-1"), Map.of(), Map.of())
                .connection().kafka()).containsEntry("acks", "all");
    }

    @Test
    void shouldRefuseAnUnknownEnvironmentVariableNamingIt() throws IOException {
        Path file = file("instance.id=a");

        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of("SNOWSTAMP_ID_WORKERS", "3"), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessage("environment variable SNOWSTAMP_ID_WORKERS names no configuration key: accepted SNOWSTAMP_"
                        + " followed by a key in capitals with '.' and '-' as '_' (SNOWSTAMP_ID_WORKER_OFFSET,"
                        + " SNOWSTAMP_KAFKA_SASL_MECHANISM)");
        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of("SNOWSTAMP_KAFKA_", "x"), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("environment variable SNOWSTAMP_KAFKA_ names no configuration key");
    }

    @Test
    void shouldRefuseAnUnknownOverrideNamingIt() throws IOException {
        Path file = file("instance.id=a");

        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of("stamp.json_field", "id")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("unknown configuration key 'stamp.json_field' (from the command line): accepted ");
        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of("kafka.", "x")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("unknown configuration key 'kafka.' (from the command line)");
    }

    @Test
    void shouldRefuseAMissingConfigFileNamingIt() {
        Path missing = dir.resolve("nope.properties");

        assertThatThrownBy(() -> ConfigLoader.load(missing, Map.of(), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--config=" + missing + " is invalid: the file does not exist");
    }

    @Test
    void shouldRefuseAnUnreadableConfigFile() throws IOException {
        Path file = file("instance.id=a", "application.id=\\uZZZZ");

        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("--config=" + file + " is invalid: cannot read it (");
    }

    @Test
    void shouldTrimValuesReadFromTheFile() throws IOException {
        SnowstampConfig config = ConfigLoader.load(file("instance.id = a  ", "id.worker-offset =  7  "), Map.of(), Map.of());

        assertThat(config.connection().instanceId()).isEqualTo("a");
        assertThat(config.ids().workerOffset()).isEqualTo(7);
    }

    @Test
    void shouldValidateTheMergedValuesNotEachSource() throws IOException {
        // the file alone would be invalid (input == output) but the override fixes it
        Path file = file("instance.id=a", "output.topic=events.raw");

        SnowstampConfig config = ConfigLoader.load(file, Map.of(), Map.of("input.topic", "other.in"));

        assertThat(config.topics().input()).isEqualTo("other.in");
        assertThat(config.topics().output()).isEqualTo("events.raw");
    }

    @Test
    void shouldReportAnInvalidValueFromAnySourceWithKeyAndValue() throws IOException {
        Path file = file("instance.id=a");

        assertThatThrownBy(() -> ConfigLoader.load(file, Map.of("SNOWSTAMP_STAMP_PROVENANCE", "yes"), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessage("stamp.provenance=yes is invalid: accepted true or false (from environment variable SNOWSTAMP_STAMP_PROVENANCE)");
        assertThatThrownBy(() -> ConfigLoader.read(file, Map.of(), Map.of("stamp.json-type", "text"), Map.of("stamp.json-type", "--set")))
                .hasMessageEndingWith("(from --set)");
        assertThatThrownBy(() -> ConfigLoader.load(file("stamp.max-depth=0"), Map.of(), Map.of()))
                .hasMessageEndingWith("(from file " + file + ")");
    }
}
