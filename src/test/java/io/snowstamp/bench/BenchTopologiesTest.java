package io.snowstamp.bench;

import io.snowstamp.state.IdHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The breakdown cases of {@code bench}: what they write, so their cost is the cost of what the stamper writes. */
class BenchTopologiesTest {
    private static List<TestRecord<byte[], byte[]>> run(boolean headers) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-topologies-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(BenchTopologies.forward("in", "out", headers), props)) {
            TestInputTopic<byte[], byte[]> in = driver.createInputTopic("in", new ByteArraySerializer(), new ByteArraySerializer());
            TestOutputTopic<byte[], byte[]> out = driver.createOutputTopic("out", new ByteArrayDeserializer(), new ByteArrayDeserializer());
            in.pipeInput("k".getBytes(StandardCharsets.UTF_8), "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
            in.pipeInput("k".getBytes(StandardCharsets.UTF_8), "{\"a\":2}".getBytes(StandardCharsets.UTF_8));
            return out.readRecordsToList();
        }
    }

    @Test
    void shouldForwardTheValueUnchangedWithoutHeaders() {
        List<TestRecord<byte[], byte[]>> records = run(false);
        assertThat(records).hasSize(2);
        assertThat(new String(records.get(1).value(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":2}");
        assertThat(records.get(0).headers().toArray()).isEmpty();
    }

    @Test
    void shouldAddTheStampersTwoHeadersInItsFormatWithANewNumberPerRecord() {
        List<TestRecord<byte[], byte[]>> records = run(true);
        assertThat(records).hasSize(2);
        assertThat(new String(records.get(1).headers().lastHeader(IdHeader.SOURCE).value(), StandardCharsets.UTF_8)).isEqualTo("in/0/1");
        long first = IdHeader.parse(records.get(0).headers().lastHeader(IdHeader.ID).value());
        long second = IdHeader.parse(records.get(1).headers().lastHeader(IdHeader.ID).value());
        assertThat(IdHeader.ascii(first)).hasSize(19);
        assertThat(second).isEqualTo(first + 1);
        assertThat(new String(records.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
    }
}
