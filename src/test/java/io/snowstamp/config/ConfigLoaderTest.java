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

        assertThat(config.applicationId()).isEqualTo("snowstamp");
        assertThat(config.inputTopic()).isEqualTo("events.raw");
        assertThat(config.outputTopic()).isEqualTo("events.stamped");
        assertThat(config.dlqTopic()).isEqualTo("events.dlq");
        assertThat(config.processingGuarantee()).isEqualTo(SnowstampConfig.Guarantee.EXACTLY_ONCE_V2);
        assertThat(config.layout()).isEqualTo(new IdLayout(41, 0, 10, 12, 1577836800000L, 1, false));
        assertThat(config.datacenterId()).isZero();
        assertThat(config.workerOffset()).isZero();
        assertThat(config.jsonField()).isNull();
        assertThat(config.jsonType()).isEqualTo(SnowstampConfig.JsonType.NUMBER);
        assertThat(config.onExistingField()).isEqualTo(SnowstampConfig.OnExistingField.REJECT);
        assertThat(config.provenance()).isTrue();
        assertThat(config.maxLead()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.onExcessLead()).isEqualTo(SnowstampConfig.OnExcessLead.CONTINUE);
        assertThat(config.reservation()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.heartbeat()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.tailGuard()).isTrue();
        assertThat(config.tailGuardTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(config.takeoverGap()).isEqualTo(Duration.ZERO);
        assertThat(config.stateDir()).isEqualTo(Path.of("data/streams"));
        assertThat(config.instanceId()).isEqualTo("box-1");
        assertThat(config.kafka()).isEmpty();
        assertThat(config.embeddedBroker()).isTrue();
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

        assertThat(config.outputTopic()).as("default").isEqualTo("events.stamped");
        assertThat(config.inputTopic()).as("file over default").isEqualTo("file.in");
        assertThat(config.instanceId()).as("file over default").isEqualTo("from-file");
        assertThat(config.workerOffset()).as("environment over file").isEqualTo(3);
        assertThat(config.kafka()).as("environment over file").containsExactly(Map.entry("sasl.mechanism", "PLAIN"));
        assertThat(config.applicationId()).as("overrides over environment").isEqualTo("from-cli");
        assertThat(config.jsonField()).as("overrides over environment").isEqualTo("cliField");
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

        assertThat(config.workerOffset()).isEqualTo(3);
        assertThat(config.kafka()).containsOnly(
                Map.entry("sasl.mechanism", "PLAIN"),
                Map.entry("security.protocol", "SASL_SSL"));
        assertThat(config.onExistingField()).isEqualTo(SnowstampConfig.OnExistingField.KEEP);
        assertThat(config.layout()).isEqualTo(IdLayout.preset("js-safe"));
    }

    @Test
    void shouldIgnoreLoggingEnvironmentVariables() throws IOException {
        Map<String, String> env = Map.of(
                "SNOWSTAMP_LOG_LEVEL", "DEBUG",
                "SNOWSTAMP_LOG_KAFKA_LEVEL", "INFO",
                "SNOWSTAMP_LOG_WHATEVER", "x");

        SnowstampConfig config = ConfigLoader.load(file("instance.id=a"), env, Map.of());

        assertThat(config.kafka()).isEmpty();
        assertThat(config.applicationId()).isEqualTo("snowstamp");
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

        assertThat(config.instanceId()).isEqualTo("a");
        assertThat(config.workerOffset()).isEqualTo(7);
    }

    @Test
    void shouldValidateTheMergedValuesNotEachSource() throws IOException {
        // the file alone would be invalid (input == output) but the override fixes it
        Path file = file("instance.id=a", "output.topic=events.raw");

        SnowstampConfig config = ConfigLoader.load(file, Map.of(), Map.of("input.topic", "other.in"));

        assertThat(config.inputTopic()).isEqualTo("other.in");
        assertThat(config.outputTopic()).isEqualTo("events.raw");
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
