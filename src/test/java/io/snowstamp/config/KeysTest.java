package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KeysTest {

    @Test
    void shouldDefineTheDocumentedDefaults() {
        assertThat(Keys.defaults()).containsOnly(
                Map.entry("application.id", "snowstamp"),
                Map.entry("input.topic", "events.raw"),
                Map.entry("output.topic", "events.stamped"),
                Map.entry("dlq.topic", "events.dlq"),
                Map.entry("processing.guarantee", "exactly_once_v2"),
                Map.entry("id.preset", "snowflake"),
                Map.entry("id.epoch", ""),
                Map.entry("id.time-unit", ""),
                Map.entry("id.time-bits", ""),
                Map.entry("id.datacenter-bits", ""),
                Map.entry("id.worker-bits", ""),
                Map.entry("id.sequence-bits", ""),
                Map.entry("id.worker-in-low-bits", ""),
                Map.entry("id.datacenter-id", "0"),
                Map.entry("id.worker-offset", "0"),
                Map.entry("id.lifetime-warning", "365d"),
                Map.entry("id.max-lead", "10s"),
                Map.entry("id.on-excess-lead", "continue"),
                Map.entry("id.reservation", "1s"),
                Map.entry("lease.heartbeat", "5s"),
                Map.entry("recovery.tail-guard", "true"),
                Map.entry("recovery.tail-guard-timeout", "60s"),
                Map.entry("recovery.takeover-gap", ""),
                Map.entry("recovery.stall-after", "60s"),
                Map.entry("stamp.json-field", ""),
                Map.entry("stamp.json-type", "number"),
                Map.entry("stamp.on-existing-field", "reject"),
                Map.entry("stamp.max-depth", "64"),
                Map.entry("stamp.provenance", "true"),
                Map.entry("stamp.header-format", "text"),
                Map.entry("stamp.value-format", "json"),
                Map.entry("stamp.schema-field", "id"),
                Map.entry("stamp.protobuf-field-number", ""),
                Map.entry("schema-registry.url", ""),
                Map.entry("schema-registry.subject-strategy", "topic"),
                Map.entry("schema-registry.username", ""),
                Map.entry("schema-registry.password", ""),
                Map.entry("schema-registry.truststore", ""),
                Map.entry("schema-registry.truststore-password", ""),
                Map.entry("schema-registry.keystore", ""),
                Map.entry("schema-registry.keystore-password", ""),
                Map.entry("schema-registry.timeout", "10s"),
                Map.entry("schema-registry.recheck-interval", "30s"),
                Map.entry("schema-registry.cache-size", "1000"),
                Map.entry("profile", "default"),
                Map.entry("state.dir", "data/streams"),
                Map.entry("instance.id", ""),
                Map.entry("admin.port", ""),
                Map.entry("admin.bind", "127.0.0.1"),
                Map.entry("admin.advertised-host", ""),
                Map.entry("id.mode", "snowflake"),
                Map.entry("sequence.tag-source", "key"),
                Map.entry("sequence.auto-create", "false"),
                Map.entry("sequence.default-start", "1"),
                Map.entry("sequence.default-step", "1000"),
                Map.entry("sequence.tags-topic", "snowstamp-tags"),
                Map.entry("sequence.checkpoint-interval", "30s"),
                Map.entry("id.space", "default"),
                Map.entry("id.worker-registry", "on"),
                Map.entry("registry.topic", "snowstamp-workers"),
                Map.entry("registry.heartbeat", "10s"),
                Map.entry("registry.stale-after", "1m"),
                Map.entry("registry.expire-after", ""));
        assertThat(Keys.help()).containsOnlyKeys(Keys.defaults().keySet());
        assertThat(Keys.help().values()).allSatisfy(help -> assertThat(help).isNotBlank());
    }

    @Test
    void shouldKnowListedKeysAndAnyKafkaKey() {
        assertThat(Keys.isKnown("id.worker-offset")).isTrue();
        assertThat(Keys.isKnown("kafka.sasl.mechanism")).isTrue();
        assertThat(Keys.isKnown("kafka.x")).isTrue();
        assertThat(Keys.isKnown("kafka.")).isFalse();
        assertThat(Keys.isKnown("kafka")).isFalse();
        assertThat(Keys.isKnown("id.worker_offset")).isFalse();
        assertThat(Keys.isKnown("ID.WORKER-OFFSET")).isFalse();
        assertThat(Keys.isKnown("")).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
            "SNOWSTAMP_ID_WORKER_OFFSET, id.worker-offset",
            "SNOWSTAMP_APPLICATION_ID, application.id",
            "SNOWSTAMP_STAMP_ON_EXISTING_FIELD, stamp.on-existing-field",
            "SNOWSTAMP_ID_WORKER_IN_LOW_BITS, id.worker-in-low-bits",
            "SNOWSTAMP_RECOVERY_TAIL_GUARD_TIMEOUT, recovery.tail-guard-timeout",
            "SNOWSTAMP_KAFKA_SASL_MECHANISM, kafka.sasl.mechanism",
            "SNOWSTAMP_KAFKA_BOOTSTRAP_SERVERS, kafka.bootstrap.servers",
            "SNOWSTAMP_KAFKA_SASL_JAAS_CONFIG, kafka.sasl.jaas.config",
    })
    void shouldMapAnEnvironmentVariableToItsKey(String variable, String key) {
        assertThat(Keys.fromEnvironmentName(variable)).isEqualTo(key);
    }

    @ParameterizedTest
    @CsvSource({"SNOWSTAMP_NOPE", "SNOWSTAMP_KAFKA_", "SNOWSTAMP_", "ID_WORKER_OFFSET", "snowstamp_id_worker_offset",
            "SNOWSTAMP_ID_WORKER-OFFSET"})
    void shouldMapAVariableNamingNoKeyToNull(String variable) {
        assertThat(Keys.fromEnvironmentName(variable)).isNull();
    }

    @Test
    void shouldRoundTripEveryListedKeyThroughItsEnvironmentName() {
        for (String key : Keys.defaults().keySet()) {
            assertThat(Keys.fromEnvironmentName("SNOWSTAMP_" + Keys.envName(key))).as(key).isEqualTo(key);
        }
        assertThat(Keys.envName("id.worker-offset")).isEqualTo("ID_WORKER_OFFSET");
    }
}
