package io.snowstamp.bench;

import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.schema.AvroEvolution;
import io.snowstamp.schema.Stamping;
import io.snowstamp.schema.WireFormat;
import io.snowstamp.state.IdHeader;
import io.snowstamp.json.JsonIdSplicer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The floors and the UUID peer of {@code bench}: what they write, so a floor costs what the bytes the stamper writes cost. */
class BenchTopologiesTest {
    private static final JsonIdSplicer SPLICER = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 64);

    private static List<TestRecord<byte[], byte[]>> run(BenchTopologies.Carry carry) {
        return run(BenchTopologies.forward("in", "out", carry, SPLICER));
    }

    private static List<TestRecord<byte[], byte[]>> run(Topology topology) {
        return run(topology, "{\"a\":1}".getBytes(StandardCharsets.UTF_8), "{\"a\":2}".getBytes(StandardCharsets.UTF_8));
    }

    private static List<TestRecord<byte[], byte[]>> run(Topology topology, byte[]... values) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-topologies-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(topology, props)) {
            TestInputTopic<byte[], byte[]> in = driver.createInputTopic("in", new ByteArraySerializer(), new ByteArraySerializer());
            TestOutputTopic<byte[], byte[]> out = driver.createOutputTopic("out", new ByteArrayDeserializer(), new ByteArrayDeserializer());
            for (byte[] value : values) {
                in.pipeInput("k".getBytes(StandardCharsets.UTF_8), value);
            }
            return out.readRecordsToList();
        }
    }

    @Test
    void shouldForwardTheValueUnchangedWithoutHeaders() {
        List<TestRecord<byte[], byte[]>> records = run(BenchTopologies.Carry.NOTHING);
        assertThat(records).hasSize(2);
        assertThat(new String(records.get(1).value(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":2}");
        assertThat(records.get(0).headers().toArray()).isEmpty();
    }

    @Test
    void shouldAddTheStampersTwoHeadersInItsFormatWithANewNumberPerRecord() {
        List<TestRecord<byte[], byte[]>> records = run(BenchTopologies.Carry.HEADERS);
        assertThat(records).hasSize(2);
        assertThat(new String(records.get(1).headers().lastHeader(IdHeader.SOURCE).value(), StandardCharsets.UTF_8)).isEqualTo("in/0/1");
        long first = IdHeader.parse(records.get(0).headers().lastHeader(IdHeader.ID).value());
        long second = IdHeader.parse(records.get(1).headers().lastHeader(IdHeader.ID).value());
        assertThat(IdHeader.ascii(first)).hasSize(19);
        assertThat(second).isEqualTo(first + 1);
        assertThat(new String(records.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
    }

    @Test
    void shouldWriteTheCompactHeadersInTheirFormat() {
        List<TestRecord<byte[], byte[]>> records = run(BenchTopologies.Carry.COMPACT_HEADERS);
        assertThat(IdHeader.parseBinary(records.get(1).headers().lastHeader(IdHeader.COMPACT_SOURCE).value())).isEqualTo(1);
        long first = IdHeader.idOf(records.get(0).headers());
        assertThat(IdHeader.idOf(records.get(1).headers())).isEqualTo(first + 1);
        assertThat(records.get(0).headers().toArray()).hasSize(2);
    }

    @Test
    void shouldSpliceTheHeadersNumberIntoTheJsonAsJsonModeDoes() {
        List<TestRecord<byte[], byte[]>> records = run(BenchTopologies.Carry.HEADERS_AND_JSON);
        long id = IdHeader.idOf(records.get(1).headers());
        assertThat(new String(records.get(1).value(), StandardCharsets.UTF_8)).isEqualTo("{\"id\":" + id + ",\"a\":2}");
        assertThat(records.get(1).headers().lastHeader(IdHeader.SOURCE)).isNotNull();
    }

    @Test
    void shouldAppendTheHeadersNumberToTheAvroValueAsAvroModeDoes() {
        String schema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"s\",\"type\":\"string\"}]}";
        Stamping stamping = Stamping.avro(schema, 3, AvroEvolution.evolve(schema, "id", OnExistingField.REJECT), "id", 7);
        byte[] value = {0, 0, 0, 0, 3, 2, 'a'};   // schema ID 3, the string "a"
        List<TestRecord<byte[], byte[]>> records = run(BenchTopologies.forward("in", "out", stamping), value, value);
        long id = IdHeader.idOf(records.get(1).headers());
        assertThat(records.get(1).value()).isEqualTo(stamping.stamp(value, id));
        assertThat(WireFormat.schemaId(records.get(1).value())).isEqualTo(7);
        assertThat(IdHeader.idOf(records.get(0).headers())).isEqualTo(id - 1);
        assertThat(records.get(1).headers().lastHeader(IdHeader.SOURCE)).isNotNull();
    }

    @Test
    void shouldRefuseTheAvroCarryWithoutAStamping() {
        assertThatThrownBy(() -> BenchTopologies.forward("in", "out", BenchTopologies.Carry.HEADERS_AND_AVRO, SPLICER))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseTheJsonFloorWithoutASplicer() {
        assertThatThrownBy(() -> BenchTopologies.forward("in", "out", BenchTopologies.Carry.HEADERS_AND_JSON, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldPutARandomUuidInAHeaderOfThePeerAndKeepTheValue() {
        List<TestRecord<byte[], byte[]>> records = run(BenchTopologies.uuidHeader("in", "out"));
        String first = new String(records.get(0).headers().lastHeader(BenchTopologies.UUID_HEADER).value(), StandardCharsets.UTF_8);
        String second = new String(records.get(1).headers().lastHeader(BenchTopologies.UUID_HEADER).value(), StandardCharsets.UTF_8);
        assertThat(UUID.fromString(first).version()).isEqualTo(4);
        assertThat(second).isNotEqualTo(first);
        assertThat(new String(records.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
    }
}
