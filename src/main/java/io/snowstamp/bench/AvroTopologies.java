package io.snowstamp.bench;

import io.snowstamp.schema.AvroEvolution;
import io.snowstamp.schema.Stamping;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.streams.Topology;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * The peer of the Avro case: what Kafka Connect's {@code InsertField} behind an Avro converter does
 * (decode each value into a {@code GenericRecord}, set the field, encode it with the output schema). Its
 * floor is {@link BenchTopologies#forward(String, String, Stamping)}.
 */
final class AvroTopologies {
    private AvroTopologies() {
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
        return BenchTopologies.byteStream(input, output,
                stream -> stream.mapValues(value -> convert(value, reader, writer, outputSchema, outputId, counter[0]++)));
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
