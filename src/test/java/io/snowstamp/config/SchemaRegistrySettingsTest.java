package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.config.SchemaRegistrySettings.SubjectStrategy;
import io.snowstamp.config.StampSettings.ValueFormat;
import io.snowstamp.testing.TestConfig;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class SchemaRegistrySettingsTest {

    private static SnowstampConfig config(String... pairs) {
        return TestConfig.base(Keys.INSTANCE_ID, "test-1").with(pairs);
    }

    @Test
    void shouldLeaveJsonValuesWithoutARegistryByDefault() {
        SnowstampConfig config = config();
        assertThat(config.stamp().valueFormat()).isEqualTo(ValueFormat.JSON);
        assertThat(config.stamp().schemaRegistryValues()).isFalse();
        assertThat(config.schemaRegistry()).isEqualTo(SchemaRegistrySettings.off());
        assertThat(config.describeMasked()).doesNotContain("value-format");
    }

    @Test
    void shouldReadAvroValuesAndTheRegistry() {
        SnowstampConfig config = config("stamp.value-format", "AVRO", "stamp.schema-field", "snow_id",
                "schema-registry.url", "https://r1:8081/, http://r2:8080/apis/ccompat/v7",
                "schema-registry.subject-strategy", "topic-record", "schema-registry.username", "alice",
                "schema-registry.password", "s3cret", "schema-registry.timeout", "3s", "schema-registry.cache-size", "50");

        assertThat(config.stamp().valueFormat()).isEqualTo(ValueFormat.AVRO);
        assertThat(config.stamp().schemaField()).isEqualTo("snow_id");
        assertThat(config.schemaRegistry()).isEqualTo(new SchemaRegistrySettings(
                List.of(URI.create("https://r1:8081"), URI.create("http://r2:8080/apis/ccompat/v7")), SubjectStrategy.TOPIC_RECORD,
                "alice", "s3cret", null, null, null, null, Duration.ofSeconds(3), 50));
        assertThat(config.describeMasked()).contains("value-format=avro schema-field=snow_id schema-registry=[https://r1:8081,"
                + " http://r2:8080/apis/ccompat/v7] subject-strategy=topic-record user=alice").doesNotContain("s3cret");
        assertThat(config.schemaRegistry().toString()).doesNotContain("s3cret");
    }

    @Test
    void shouldNameSubjectsAsConfluentsStrategiesDo() {
        assertThat(SubjectStrategy.TOPIC.subject("out", "com.acme.Order")).isEqualTo("out-value");
        assertThat(SubjectStrategy.RECORD.subject("out", "com.acme.Order")).as("never the producers' RecordNameStrategy subject")
                .isEqualTo("com.acme.Order-stamped");
        assertThat(SubjectStrategy.TOPIC_RECORD.subject("out", "com.acme.Order")).isEqualTo("out-com.acme.Order");
    }

    @Test
    void shouldTakeAConfiguredProtobufFieldNumber() {
        assertThat(config("stamp.value-format", "protobuf", "schema-registry.url", "http://r:8081").stamp().protobufFieldNumber()).isZero();
        assertThat(config("stamp.value-format", "protobuf", "schema-registry.url", "http://r:8081", "stamp.protobuf-field-number", "100")
                .stamp().protobufFieldNumber()).isEqualTo(100);
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "stamp.value-format|xml|one of json, avro, protobuf",
            "stamp.schema-field|1st|a name of 1-128 letters, digits and underscores",
            "stamp.schema-field|snow-id|a name of 1-128 letters, digits and underscores",
            "stamp.protobuf-field-number|0|a whole number 1..536870911",
            "stamp.protobuf-field-number|19500|1..536870911 except 19000..19999",
            "schema-registry.url|localhost:8081|http:// or https:// URLs separated by commas",
            "schema-registry.url|ftp://r/x|http:// or https:// URLs separated by commas",
            "schema-registry.subject-strategy|record-name|one of topic, record, topic-record",
            "schema-registry.username|a:b|a user name without ':'",
            "schema-registry.truststore|/no/such/file.p12|a readable key store file",
            "schema-registry.timeout|0s|100ms..10m",
            "schema-registry.cache-size|0|a whole number 1..1000000"})
    void shouldRefuseAnInvalidValueNamingKeyValueAndAcceptedForm(String key, String value, String accepted) {
        assertThatThrownBy(() -> config("stamp.value-format", key.equals("stamp.value-format") ? value : "protobuf",
                "schema-registry.url", "http://r:8081", key, value))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(key + "=" + value + " is invalid: accepted " + accepted);
    }

    @Test
    void shouldRefuseAvroValuesWithoutARegistryOrWithAJsonField() {
        assertThatThrownBy(() -> config("stamp.value-format", "avro"))
                .hasMessageStartingWith("schema-registry.url= is invalid: accepted the registry's URL with stamp.value-format=avro");
        assertThatThrownBy(() -> config("stamp.value-format", "avro", "schema-registry.url", "http://r:8081", "stamp.json-field", "id"))
                .hasMessageStartingWith("stamp.json-field=id is invalid: accepted empty with stamp.value-format=avro");
        assertThatThrownBy(() -> config("stamp.value-format", "avro", "schema-registry.url", "http://r:8081", "id.mode", "sequence"))
                .hasMessageStartingWith("stamp.value-format=avro is invalid: accepted json with mode=sequence");
    }
}
