package io.snowstamp.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.config.ConfigException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.testing.TestConfig;
import io.snowstamp.stream.DeadLetterHandler;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class KafkaSettingsTest {

    private static SnowstampConfig config(String... pairs) {
        return TestConfig.base(Keys.INSTANCE_ID, "box-1", Keys.STATE_DIR, "/var/lib/snowstamp",
                Keys.BOOTSTRAP_SERVERS, "k1:9092").with(pairs);
    }

    private static ConnectionSettings connection(String... pairs) {
        return config(pairs).connection();
    }

    private static Properties streams(SnowstampConfig config) {
        return KafkaSettings.streams(config.connection(), config.topics());
    }

    private static Properties streamsUntuned(SnowstampConfig config) {
        return KafkaSettings.streamsUntuned(config.connection(), config.topics());
    }

    @ParameterizedTest
    @CsvSource({
            "kafka.application.id, other, application.id",
            "kafka.processing.guarantee, at_least_once, processing.guarantee",
            "kafka.state.dir, /tmp/x, state.dir",
            "kafka.errors.dead.letter.queue.topic.name, dead, dlq.topic",
    })
    void shouldRefuseStreamsKeysThatSnowstampManagesNamingTheKeyToUse(String key, String value, String instead) {
        assertThatThrownBy(() -> streams(config(key, value)))
                .isInstanceOf(ConfigException.class)
                .hasMessage(key + "=" + value + " is invalid: accepted nothing here, set " + instead + " instead");
    }

    @Test
    void shouldRefuseReplacingTheDeadLetterHandler() {
        assertThatThrownBy(() -> streams(config("kafka.processing.exception.handler", "x.Y")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("kafka.processing.exception.handler=x.Y is invalid: accepted nothing here,"
                        + " set (none: snowstamp's dead-letter handler is required) instead");
    }

    /** configuration.md: the processing and production exception handlers are refused (a failed write must stop it). */
    @Test
    void shouldRefuseReplacingTheWriteFailureHandler() {
        assertThatThrownBy(() -> streams(config("kafka.production.exception.handler", "x.Y")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("kafka.production.exception.handler=x.Y is invalid: accepted nothing here,"
                        + " set (none: a failed write must stop the stamper) instead");
    }

    @Test
    void shouldBuildTheStreamsPropertiesFromTheConfig() {
        Properties props = streamsUntuned(config("application.id", "stamper", "dlq.topic", "dead"));

        assertThat(props).containsOnly(
                Map.entry("bootstrap.servers", "k1:9092"),
                Map.entry("application.id", "stamper"),
                Map.entry("processing.guarantee", "exactly_once_v2"),
                Map.entry("state.dir", Path.of("/var/lib/snowstamp/box-1").toString()),
                Map.entry("errors.dead.letter.queue.topic.name", "dead"),
                Map.entry("processing.exception.handler", DeadLetterHandler.class.getName()),
                Map.entry("production.exception.handler", io.snowstamp.stream.WriteFailureHandler.class.getName()),
                Map.entry("processing.exception.handler.global.enabled", "true"),
                Map.entry("default.key.serde", Serdes.ByteArraySerde.class.getName()),
                Map.entry("default.value.serde", Serdes.ByteArraySerde.class.getName()),
                Map.entry("client.id", "stamper-box-1"));
    }

    @Test
    void shouldPassKafkaKeysThroughToStreams() {
        String jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";";
        Properties props = streams(config(
                "kafka.sasl.mechanism", "PLAIN",
                "kafka.security.protocol", "SASL_SSL",
                "kafka.sasl.jaas.config", jaas,
                "kafka.num.stream.threads", "2",
                "kafka.producer.linger.ms", "20",
                "kafka.client.id", "mine",
                "processing.guarantee", "at_least_once"));

        assertThat(props.getProperty("sasl.mechanism")).isEqualTo("PLAIN");
        assertThat(props.getProperty("security.protocol")).isEqualTo("SASL_SSL");
        assertThat(props.getProperty("sasl.jaas.config")).isEqualTo(jaas);
        assertThat(props.getProperty("num.stream.threads")).isEqualTo("2");
        assertThat(props.getProperty("producer.linger.ms")).isEqualTo("20");
        assertThat(props.getProperty("client.id")).as("user's choice kept").isEqualTo("mine");
        assertThat(props.getProperty("processing.guarantee")).isEqualTo("at_least_once");
    }

    @Test
    void shouldBoundRocksDbWithSnowstampsSetterUnlessTheUserNamesTheirOwn() {
        assertThat(streams(config()).getProperty("rocksdb.config.setter")).isEqualTo(SmallRocksDb.class.getName());
        assertThat(streams(config("kafka.rocksdb.config.setter", "my.Setter")).getProperty("rocksdb.config.setter"))
                .as("user's choice kept").isEqualTo("my.Setter");
    }

    @Test
    void shouldPutTheStateOfEachInstanceInItsOwnAbsoluteDirectory() {
        Properties props = streams(config("state.dir", "data/streams", "instance.id", "node-7"));

        assertThat(Path.of(props.getProperty("state.dir"))).isEqualTo(Path.of("data/streams/node-7").toAbsolutePath());
        assertThat(Path.of(props.getProperty("state.dir")).isAbsolute()).isTrue();
    }

    @Test
    void shouldDropStreamsOnlyPrefixedKeysFromPlainClients() {
        Properties props = KafkaSettings.client(connection(
                "kafka.security.protocol", "SSL",
                "kafka.consumer.max.poll.records", "5",
                "kafka.producer.linger.ms", "20",
                "kafka.admin.retries", "3",
                "kafka.main.consumer.fetch.min.bytes", "1",
                "kafka.restore.consumer.fetch.min.bytes", "1",
                "kafka.global.consumer.fetch.min.bytes", "1",
                "kafka.request.timeout.ms", "9000"));

        assertThat(props).containsOnly(
                Map.entry("bootstrap.servers", "k1:9092"),
                Map.entry("security.protocol", "SSL"),
                Map.entry("request.timeout.ms", "9000"),
                Map.entry("enable.metrics.push", "false"));
    }

    @Test
    void shouldLeaveClientTelemetryOffUnlessAsked() {
        assertThat(streams(config())).containsEntry("enable.metrics.push", "false");
        assertThat(KafkaSettings.client(connection())).containsEntry("enable.metrics.push", "false");

        SnowstampConfig asked = config("kafka.enable.metrics.push", "true");
        assertThat(streams(asked)).containsEntry("enable.metrics.push", "true");
        assertThat(KafkaSettings.client(asked.connection())).containsEntry("enable.metrics.push", "true");
        assertThat(KafkaSettings.consumer(asked.connection())).containsEntry("enable.metrics.push", "true");
    }

    @Test
    void shouldKeepTheStreamsGroupProtocolForKafkaStreamsOnly() {
        SnowstampConfig config = config("kafka.group.protocol", "streams");

        assertThat(streams(config)).containsEntry("group.protocol", "streams");
        assertThat(KafkaSettings.client(config.connection())).as("a KafkaConsumer refuses group.protocol=streams")
                .doesNotContainKey("group.protocol");
        assertThat(KafkaSettings.consumer(config.connection())).doesNotContainKey("group.protocol");
    }

    @Test
    void shouldBuildAnIdempotentByteArrayProducer() {
        assertThat(KafkaSettings.producer(connection())).containsOnly(
                Map.entry("bootstrap.servers", "k1:9092"),
                Map.entry("acks", "all"),
                Map.entry("enable.idempotence", "true"),
                Map.entry("linger.ms", "5"),
                Map.entry("enable.metrics.push", "false"),
                Map.entry("key.serializer", ByteArraySerializer.class.getName()),
                Map.entry("value.serializer", ByteArraySerializer.class.getName()));
        assertThat(KafkaSettings.producer(connection("kafka.linger.ms", "50")).getProperty("linger.ms")).isEqualTo("50");
    }

    @Test
    void shouldBuildAReadCommittedByteArrayConsumer() {
        Properties props = KafkaSettings.consumer(connection("kafka.isolation.level", "read_uncommitted",
                "kafka.max.poll.records", "10"));

        assertThat(props).containsOnly(
                Map.entry("bootstrap.servers", "k1:9092"),
                Map.entry("isolation.level", "read_committed"),
                Map.entry("enable.auto.commit", "false"),
                Map.entry("max.poll.records", "10"),
                Map.entry("enable.metrics.push", "false"),
                Map.entry("key.deserializer", ByteArrayDeserializer.class.getName()),
                Map.entry("value.deserializer", ByteArrayDeserializer.class.getName()));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5})
    void shouldGiveTheChangelogTheReplicationTheClusterCanGive(int brokers) {
        SnowstampConfig config = config();
        Properties props = streams(config);
        io.snowstamp.recovery.Replication chosen = io.snowstamp.recovery.Replication.forBrokers(brokers);
        assertThat(KafkaSettings.internalTopics(props, config.connection(), chosen)).isEqualTo(chosen.describe());
        assertThat(props).containsEntry("replication.factor", Short.toString(chosen.factor()))
                .containsEntry("topic.min.insync.replicas", Integer.toString(chosen.minInsyncReplicas()));
    }

    @Test
    void shouldLetKafkaKeysDecideTheInternalTopicsReplication() {
        io.snowstamp.recovery.Replication threeBrokers = io.snowstamp.recovery.Replication.forBrokers(3);
        SnowstampConfig two = config("kafka.replication.factor", "2");
        Properties props = streams(two);
        assertThat(KafkaSettings.internalTopics(props, two.connection(), threeBrokers))
                .isEqualTo("replication.factor=2 min.insync.replicas=1 (from kafka.replication.factor)");
        assertThat(props).containsEntry("replication.factor", "2").containsEntry("topic.min.insync.replicas", "1");

        SnowstampConfig brokerDefault = config("kafka.replication.factor", "-1");
        props = streams(brokerDefault);
        assertThat(KafkaSettings.internalTopics(props, brokerDefault.connection(), threeBrokers))
                .isEqualTo("replication.factor=broker-default (from kafka.replication.factor)");
        assertThat(props).containsEntry("replication.factor", "-1").doesNotContainKey("topic.min.insync.replicas");

        SnowstampConfig own = config("kafka.topic.min.insync.replicas", "3");
        props = streams(own);
        assertThat(KafkaSettings.internalTopics(props, own.connection(), threeBrokers))
                .isEqualTo("replication.factor=3 min.insync.replicas=3 (from kafka.* settings)");
        assertThat(props).containsEntry("replication.factor", "3").containsEntry("topic.min.insync.replicas", "3");

        SnowstampConfig wrong = config("kafka.replication.factor", "three");
        assertThatThrownBy(() -> KafkaSettings.internalTopics(streams(wrong), wrong.connection(), threeBrokers))
                .isInstanceOf(ConfigException.class)
                .hasMessage("kafka.replication.factor=three is invalid: accepted -1 (the broker's default) or 1..32");
    }
}
