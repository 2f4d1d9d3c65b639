package io.snowstamp.schema;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.SystemLimitException;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;

import java.io.EOFException;
import java.io.IOException;
import java.util.List;

/**
 * An Avro payload walked over its writer schema with Apache Avro's {@link BinaryDecoder}, skipping
 * each value as {@code GenericDatumReader.skip} does, then {@link BinaryDecoder#isEnd()}. It checks
 * what a reader would refuse and {@code skip} lets through: a union branch or enum symbol out of
 * range, a negative string or bytes length; and, as Avro's reader does, its limits on collection
 * sizes. No objects are built: strings are skipped, not decoded.
 */
final class AvroValueCheck implements ValueCheck {
    /** One decoder per stream thread, reconfigured for each value (it holds no state between values). */
    private static final ThreadLocal<BinaryDecoder> DECODERS = new ThreadLocal<>();

    private final Schema writer;
    private final int schemaId;

    AvroValueCheck(Schema writer, int schemaId) {
        this.writer = writer;
        this.schemaId = schemaId;
    }

    @Override
    public void check(byte[] value) {
        BinaryDecoder in = DecoderFactory.get().binaryDecoder(value, WireFormat.HEADER_BYTES, value.length - WireFormat.HEADER_BYTES,
                DECODERS.get());
        DECODERS.set(in);
        try {
            walk(writer, in);
            if (!in.isEnd()) {
                throw invalid("bytes are left over after one value of its Avro schema");
            }
        } catch (EOFException e) {
            throw invalid("the value ends before its Avro schema does (cut off)");
        } catch (IOException | AvroRuntimeException e) {   // a varint too long, a limit of Avro's (SystemLimitException)
            throw invalid("the value does not match its Avro schema: " + e.getMessage());
        }
    }

    private void walk(Schema schema, BinaryDecoder in) throws IOException {
        switch (schema.getType()) {
            case RECORD -> {
                for (Schema.Field field : schema.getFields()) {
                    walk(field.schema(), in);
                }
            }
            case UNION -> {
                List<Schema> branches = schema.getTypes();
                int branch = in.readIndex();
                if (branch < 0 || branch >= branches.size()) {
                    throw invalid("union branch " + branch + " of a union of " + branches.size());
                }
                walk(branches.get(branch), in);
            }
            case ENUM -> {
                int symbol = in.readEnum();
                if (symbol < 0 || symbol >= schema.getEnumSymbols().size()) {
                    throw invalid("symbol " + symbol + " of enum " + schema.getFullName() + ", which has "
                            + schema.getEnumSymbols().size());
                }
            }
            case ARRAY -> {
                Schema element = schema.getElementType();
                boolean empty = GenericDatumReader.isZeroByteSchema(element);
                long total = 0;
                for (long n = in.readArrayStart(); n > 0; n = in.arrayNext()) {
                    SystemLimitException.checkMaxCollectionLength(total, n);
                    if (empty) {
                        SystemLimitException.checkMaxCollectionAllocation(n);   // nulls take no bytes: bound the loop
                    }
                    total += n;
                    for (long i = 0; i < n; i++) {
                        walk(element, in);
                    }
                }
            }
            case MAP -> {
                long total = 0;
                for (long n = in.readMapStart(); n > 0; n = in.mapNext()) {
                    SystemLimitException.checkMaxCollectionLength(total, n);
                    total += n;
                    for (long i = 0; i < n; i++) {
                        skipLength(in);
                        walk(schema.getValueType(), in);
                    }
                }
            }
            case STRING, BYTES -> skipLength(in);
            case FIXED -> in.skipFixed(schema.getFixedSize());
            case INT -> in.readInt();
            case LONG -> in.readLong();
            case FLOAT -> in.readFloat();
            case DOUBLE -> in.readDouble();
            case BOOLEAN -> in.readBoolean();
            case NULL -> in.readNull();
            default -> throw invalid("type " + schema.getType() + " is not an Avro type");
        }
    }

    private void skipLength(BinaryDecoder in) throws IOException {
        long length = in.readLong();
        if (length < 0) {
            throw invalid("a string or bytes of negative length " + length);
        }
        in.skipFixed(SystemLimitException.checkMaxBytesLength(length));
    }

    private BadRecordException invalid(String why) {
        return new BadRecordException(Code.INVALID_VALUE, "not a value of Avro schema ID " + schemaId + ": " + why);
    }
}
