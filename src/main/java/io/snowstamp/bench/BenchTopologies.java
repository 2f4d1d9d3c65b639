package io.snowstamp.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.state.IdHeader;
import io.snowstamp.stream.AlignedPartitioner;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.stream.StampedValueSerializer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** The baselines snowstamp is measured against, built as users would write them. */
public final class BenchTopologies {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BenchTopologies() {
    }

    /** A pass-through: every record copied unchanged to the output. */
    public static Topology identity(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    /**
     * The stamper's topology without the stamper: a processor that forwards every record to the output
     * partition of its input partition (the stamper's {@link AlignedPartitioner} and value wrapper) and, with
     * {@code headers}, adds {@code snowstamp-src} and {@code snowstamp-id} as the stamper writes them — the
     * input's {@code topic/partition/offset} and a 19-digit number that grows by one per record, both formatted
     * by {@link IdHeader} — but issues no ID: no generator, no state, no checks. With the pass-through and the
     * stamper in the same run it splits what stamping costs into the processor node and its partitioner, the
     * two headers (Kafka's work per header, and the bytes they add to compress, send and store), and the rest.
     */
    public static Topology forward(String input, String output, boolean headers) {
        Topology topology = new Topology();
        topology.addSource("source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), input);
        topology.addProcessor("forward", () -> new Forward(headers), "source");
        topology.addSink("sink", output, new ByteArraySerializer(), new StampedValueSerializer(), new AlignedPartitioner(), "forward");
        return topology;
    }

    /** See {@link #forward}. */
    private static final class Forward implements Processor<byte[], byte[], byte[], StampedValue> {
        private final boolean headers;
        /** Stands in for an ID: 19 digits, like every ID of the default layout after 2024; never one the stamper issues. */
        private long number = 1_000_000_000_000_000_000L;
        private ProcessorContext<byte[], StampedValue> context;
        private int partition;
        private byte[] sourcePrefix;

        Forward(boolean headers) {
            this.headers = headers;
        }

        @Override
        public void init(ProcessorContext<byte[], StampedValue> context) {
            this.context = context;
            this.partition = context.taskId().partition();
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            Record<byte[], StampedValue> out = record.withValue(new StampedValue(partition, record.value()));
            if (headers) {
                RecordMetadata source = context.recordMetadata().orElseThrow();
                if (sourcePrefix == null) {
                    sourcePrefix = (source.topic() + "/" + source.partition() + "/").getBytes(StandardCharsets.UTF_8);
                }
                out.headers().add(IdHeader.SOURCE, IdHeader.ascii(sourcePrefix, source.offset()));
                out.headers().add(IdHeader.ID, IdHeader.ascii(number++));
            }
            context.forward(out);
        }
    }

    /** What one writes by hand: parse the JSON into a tree, add a random UUID, serialize again. */
    public static Topology jacksonUuid(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .mapValues(BenchTopologies::addUuid)
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    private static byte[] addUuid(byte[] value) {
        try {
            ObjectNode node = (ObjectNode) JSON.readTree(value);
            node.put("id", UUID.randomUUID().toString());
            return JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
