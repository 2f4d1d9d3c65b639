package io.snowstamp.bench;

import io.snowstamp.schema.AvroEvolution;
import io.snowstamp.schema.Stamping;
import io.snowstamp.state.IdHeader;
import io.snowstamp.stream.AlignedPartitioner;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.stream.StampedValueSerializer;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
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

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The baselines of the Avro case: its floor (the stamper's bytes from a schema resolved before the run,
 * no ID issued, no registry, no checks) and its peer (what Kafka Connect's {@code InsertField} behind an
 * Avro converter does: decode each value into a {@code GenericRecord}, set the field, encode it with the
 * output schema).
 */
final class AvroTopologies {
    private AvroTopologies() {
    }

    /**
     * The stamper's topology without the stamper, carrying the Avro mode's bytes: the two text headers and the
     * value through {@code stamping} (the output schema's ID, a number's zig-zag varint appended).
     */
    static Topology floor(String input, String output, Stamping stamping) {
        Topology topology = new Topology();
        topology.addSource("source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), input);
        topology.addProcessor("forward", () -> new Floor(stamping), "source");
        topology.addSink("sink", output, new ByteArraySerializer(), new StampedValueSerializer(), new AlignedPartitioner(), "forward");
        return topology;
    }

    /** See {@link #floor}. */
    private static final class Floor implements Processor<byte[], byte[], byte[], StampedValue> {
        private final Stamping stamping;
        /** Stands in for an ID: 19 digits, as {@link BenchTopologies#forward} counts. */
        private long number = 1_000_000_000_000_000_000L;
        private ProcessorContext<byte[], StampedValue> context;
        private int partition;
        private byte[] sourcePrefix;

        Floor(Stamping stamping) {
            this.stamping = stamping;
        }

        @Override
        public void init(ProcessorContext<byte[], StampedValue> context) {
            this.context = context;
            this.partition = context.taskId().partition();
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            RecordMetadata source = context.recordMetadata().orElseThrow();
            long id = number++;
            Record<byte[], StampedValue> out = record.withValue(new StampedValue(partition, stamping.stamp(record.value(), id)));
            if (sourcePrefix == null) {
                sourcePrefix = (source.topic() + "/" + source.partition() + "/").getBytes(StandardCharsets.UTF_8);
            }
            out.headers().add(IdHeader.SOURCE, IdHeader.ascii(sourcePrefix, source.offset()));
            out.headers().add(IdHeader.ID, IdHeader.ascii(id));
            context.forward(out);
        }
    }

    /**
     * The peer: each value decoded with the input schema, the field set (a counter stands in for an ID),
     * encoded with the output schema and framed with its ID; no headers, as the connector writes none.
     */
    static Topology peer(String input, String output, Schema inputSchema, int outputId) {
        Schema outputSchema = new Schema.Parser().parse(
                AvroEvolution.evolve(inputSchema.toString(), "id", io.snowstamp.config.StampSettings.OnExistingField.REJECT).schema());
        long[] counter = {1_000_000_000_000_000_000L};
        GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(inputSchema, outputSchema);
        GenericDatumWriter<GenericRecord> writer = new GenericDatumWriter<>(outputSchema);
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .mapValues(value -> convert(value, reader, writer, outputSchema, outputId, counter[0]++))
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    private static byte[] convert(byte[] value, GenericDatumReader<GenericRecord> reader, GenericDatumWriter<GenericRecord> writer,
                                  Schema outputSchema, int outputId, long id) {
        try {
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, null);
            GenericRecord record = reader.read(new GenericData.Record(outputSchema), decoder);
            record.put("id", id);
            ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 16);
            out.write(ByteBuffer.allocate(5).put((byte) 0).putInt(outputId).array());
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
            writer.write(record, encoder);
            encoder.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
