package io.snowstamp.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.schema.Stamping;
import io.snowstamp.state.IdHeader;
import io.snowstamp.stream.AlignedPartitioner;
import io.snowstamp.json.JsonIdSplicer;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.stream.StampedValueSerializer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * The baselines snowstamp is measured against: the pass-through (the ceiling: no ID, no headers), the
 * floors (the same bytes as the stamper writes, no ID issued) and the peers (what users write instead).
 */
public final class BenchTopologies {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The header the UUID peer writes. */
    public static final String UUID_HEADER = "id";

    private BenchTopologies() {
    }

    /** A pass-through: every record copied unchanged to the output. */
    public static Topology identity(String input, String output) {
        return byteStream(input, output, stream -> stream);
    }

    /**
     * The wiring of the pass-through and the hand-written peers: byte arrays read from {@code input}, through
     * {@code between}, written to {@code output} (Kafka Streams' default partitioner).
     */
    static Topology byteStream(String input, String output, UnaryOperator<KStream<byte[], byte[]>> between) {
        StreamsBuilder builder = new StreamsBuilder();
        between.apply(builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray())))
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    /** What a {@link #forward} topology adds to each record: the bytes of one stamper mode, with no ID issued. */
    public enum Carry {
        /** Nothing: the processor node, the aligned partitioner and the value wrapper alone. */
        NOTHING,
        /** {@code snowstamp-src} and {@code snowstamp-id} as header mode writes them: the floor of header mode. */
        HEADERS,
        /** {@code snowsrc} and {@code snowid}, 8 bytes each, as {@code stamp.header-format=compact} writes them. */
        COMPACT_HEADERS,
        /** The two headers and the number spliced into the JSON value as JSON mode writes it: the floor of JSON mode. */
        HEADERS_AND_JSON,
        /** The two headers and the number appended to the Avro value as Avro mode writes it ({@link #forward(String, String, Stamping)}). */
        HEADERS_AND_AVRO
    }

    /** How a floor writes the value: from the input value, the number that stands in for the ID, and its digits. */
    private interface ValueWriter {
        byte[] write(byte[] value, long number, byte[] digits);
    }

    /**
     * The stamper's topology without the stamper: a processor that forwards every record to the output
     * partition of its input partition (the stamper's {@link AlignedPartitioner} and value wrapper) and adds
     * what {@code carry} says, the same bytes as the stamper writes — the input's {@code topic/partition/offset}
     * (or its offset, compact) and a 19-digit number that grows by one per record (formatted by
     * {@link IdHeader}; in JSON, spliced by the stamper's own {@link JsonIdSplicer#write}) — but issues no ID:
     * no generator, no state, no checks, and no parse of the value (the bench's values are known to be JSON
     * objects). This is the floor a stamper case is measured against: what carrying an ID costs in Kafka,
     * whoever issues it.
     *
     * @param splicer the JSON mode's splicer (its field name and format); only for {@link Carry#HEADERS_AND_JSON}
     */
    public static Topology forward(String input, String output, Carry carry, JsonIdSplicer splicer) {
        if (carry == Carry.HEADERS_AND_JSON && splicer == null) {
            throw new IllegalArgumentException("the JSON floor needs the JSON mode's splicer");
        }
        if (carry == Carry.HEADERS_AND_AVRO) {
            throw new IllegalArgumentException("the Avro floor needs the Avro mode's stamping");
        }
        ValueWriter writer = carry == Carry.HEADERS_AND_JSON ? (value, number, digits) -> splicer.write(value, Forward.splice(value), digits)
                : (value, number, digits) -> value;
        return forward(input, output, carry, writer);
    }

    /**
     * {@link #forward(String, String, Carry, JsonIdSplicer)} carrying {@link Carry#HEADERS_AND_AVRO}: the value through
     * {@code stamping} (a schema resolved before the run: the output schema's ID, the number's zig-zag varint appended).
     */
    static Topology forward(String input, String output, Stamping stamping) {
        return forward(input, output, Carry.HEADERS_AND_AVRO, (value, number, digits) -> stamping.stamp(value, number));
    }

    private static Topology forward(String input, String output, Carry carry, ValueWriter writer) {
        Topology topology = new Topology();
        topology.addSource("source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), input);
        topology.addProcessor("forward", () -> new Forward(carry, writer), "source");
        topology.addSink("sink", output, new ByteArraySerializer(), new StampedValueSerializer(), new AlignedPartitioner(), "forward");
        return topology;
    }

    /** See {@link #forward}. */
    private static final class Forward implements Processor<byte[], byte[], byte[], StampedValue> {
        private final Carry carry;
        private final ValueWriter writer;
        /** Stands in for an ID: 19 digits, like every ID of the default layout after 2024; never one the stamper issues. */
        private long number = 1_000_000_000_000_000_000L;
        private ProcessorContext<byte[], StampedValue> context;
        private int partition;
        private byte[] sourcePrefix;

        Forward(Carry carry, ValueWriter writer) {
            this.carry = carry;
            this.writer = writer;
        }

        @Override
        public void init(ProcessorContext<byte[], StampedValue> context) {
            this.context = context;
            this.partition = context.taskId().partition();
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            if (carry == Carry.NOTHING) {
                context.forward(record.withValue(new StampedValue(partition, record.value())));
                return;
            }
            RecordMetadata source = context.recordMetadata().orElseThrow();
            long id = number++;
            if (carry == Carry.COMPACT_HEADERS) {
                Record<byte[], StampedValue> out = record.withValue(new StampedValue(partition, record.value()));
                out.headers().add(IdHeader.COMPACT_SOURCE, IdHeader.binary(source.offset()));
                out.headers().add(IdHeader.COMPACT_ID, IdHeader.binary(id));
                context.forward(out);
                return;
            }
            byte[] digits = IdHeader.ascii(id);
            Record<byte[], StampedValue> out = record.withValue(new StampedValue(partition, writer.write(record.value(), id, digits)));
            if (sourcePrefix == null) {
                sourcePrefix = (source.topic() + "/" + source.partition() + "/").getBytes(StandardCharsets.UTF_8);
            }
            out.headers().add(IdHeader.SOURCE, IdHeader.ascii(sourcePrefix, source.offset()));
            out.headers().add(IdHeader.ID, digits);
            context.forward(out);
        }

        /** Where JSON mode splices into a non-empty object, found without parsing it: right after its opening brace. */
        private static JsonIdSplicer.Plan splice(byte[] value) {
            int brace = 0;
            while (value[brace] != '{') {
                brace++;
            }
            return new JsonIdSplicer.Plan(brace, -1, -1, true, false);
        }
    }

    /** What one writes by hand for header mode: a random UUID's text in a header ({@code id}), the value unchanged. */
    public static Topology uuidHeader(String input, String output) {
        return byteStream(input, output, stream -> stream.process(UuidHeader::new));
    }

    /** See {@link #uuidHeader}. */
    private static final class UuidHeader implements Processor<byte[], byte[], byte[], byte[]> {
        private ProcessorContext<byte[], byte[]> context;

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            record.headers().add(UUID_HEADER, UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
            context.forward(record);
        }
    }

    /** What one writes by hand: parse the JSON into a tree, add a random UUID, serialize again. */
    public static Topology jacksonUuid(String input, String output) {
        return byteStream(input, output, stream -> stream.mapValues(BenchTopologies::addUuid));
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
