package io.snowstamp.bench;

import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * The Avro records of {@code bench}'s schema-registry cases: the sample event's members ({@link SampleValues})
 * as fields of a record, and as many short text fields {@code f0}, {@code f1}, ... as fill the value to about
 * the size asked for (a decoder meets a field every ~20 bytes, as a JSON parser meets a member), framed for
 * a schema registry. Pure and deterministic: record {@code n} is the same bytes in every run.
 */
public final class AvroSampleValues {
    /** The framed sample event without padding fields. */
    private static final int BASE_BYTES = 43;
    private static final int FIELD_BYTES = 20;
    private static final String[] WORDS = {"order", "shipped", "parcel", "warehouse", "berlin", "lisbon", "express", "standard",
        "returned", "paid", "card", "invoice", "customer", "priority", "gift", "wrapped"};

    private AvroSampleValues() {
    }

    /** The schema of values of about {@code valueBytes}. */
    public static Schema schema(int valueBytes) {
        SchemaBuilder.FieldAssembler<Schema> fields = SchemaBuilder.record("OrderEvent").namespace("io.snowstamp.bench").fields()
                .requiredString("event").requiredLong("n").requiredString("user").requiredDouble("amount").requiredString("currency");
        for (int f = 0; f < padding(valueBytes); f++) {
            fields = fields.requiredString("f" + f);
        }
        return fields.endRecord();
    }

    /** Record {@code n} of {@code schema}, framed with {@code schemaId}. */
    public static byte[] value(long n, Schema schema, int schemaId) {
        GenericRecord record = new GenericData.Record(schema);
        record.put("event", "order.created");
        record.put("n", n);
        record.put("user", "user-" + (n * 7919 % 1000));
        record.put("amount", (n % 100_000) / 100.0);
        record.put("currency", "EUR");
        for (int f = 5; f < schema.getFields().size(); f++) {
            // two words of 14-19 bytes in all: with its length byte about FIELD_BYTES
            String text = WORDS[(int) ((n + f) % WORDS.length)] + " " + WORDS[(int) ((n * 31 + f * 7) % WORDS.length)];
            record.put(f, (text + " ".repeat(18)).substring(0, FIELD_BYTES - 1));
        }
        return framed(record, schemaId);
    }

    /** {@code record} encoded by Apache Avro and framed for a schema registry with {@code schemaId}. */
    public static byte[] framed(GenericRecord record, int schemaId) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(ByteBuffer.allocate(5).put((byte) 0).putInt(schemaId).array());
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
            new GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, encoder);
            encoder.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int padding(int valueBytes) {
        return Math.max(0, (valueBytes - BASE_BYTES) / FIELD_BYTES);
    }
}
