package io.snowstamp.schema;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;

import java.util.Arrays;

/**
 * Confluent's framing of a registry-encoded value: byte 0 (the magic byte), the schema ID as 4 bytes
 * big-endian, then the payload. A Protobuf payload starts with the message indexes: the path from the
 * schema file's top-level messages to the value's message, written as a count and that many indexes,
 * each a zig-zag varint; the common path {@code [0]} (the first message) is written as the single byte
 * 0 (a count of 0).
 */
public final class WireFormat {
    public static final byte MAGIC = 0;
    /** Magic byte and schema ID. */
    public static final int HEADER_BYTES = 5;
    private static final int[] FIRST_MESSAGE = {0};

    private WireFormat() {
    }

    /** The schema ID of a framed value; refuses anything that is not framed. */
    public static int schemaId(byte[] value) {
        if (value == null) {
            throw new BadRecordException(Code.NO_MAGIC_BYTE, "value is null (a tombstone), not a schema-registry value");
        }
        if (value.length < HEADER_BYTES || value[0] != MAGIC) {
            throw new BadRecordException(Code.NO_MAGIC_BYTE, value.length < HEADER_BYTES
                    ? "value of " + value.length + " bytes is shorter than the 5-byte schema-registry frame"
                    : "value starts with byte " + (value[0] & 0xFF) + ", not the schema-registry magic byte 0");
        }
        return ((value[1] & 0xFF) << 24) | ((value[2] & 0xFF) << 16) | ((value[3] & 0xFF) << 8) | (value[4] & 0xFF);
    }

    /** Writes {@code schemaId} into bytes 1-4 of a framed value. */
    static void putSchemaId(byte[] value, int schemaId) {
        value[1] = (byte) (schemaId >>> 24);
        value[2] = (byte) (schemaId >>> 16);
        value[3] = (byte) (schemaId >>> 8);
        value[4] = (byte) schemaId;
    }

    /** The message indexes of a framed Protobuf value (after its 5-byte header). */
    public static int[] messageIndexes(byte[] value) {
        int[] position = {HEADER_BYTES};
        int count = (int) readZigZag(value, position);
        if (count == 0) {
            return FIRST_MESSAGE;
        }
        if (count < 0 || count > 100) {
            throw new BadRecordException(Code.BAD_MESSAGE_INDEXES, "message index count " + count + " is not 1..100");
        }
        int[] indexes = new int[count];
        for (int i = 0; i < count; i++) {
            long index = readZigZag(value, position);
            if (index < 0 || index > Integer.MAX_VALUE) {
                throw new BadRecordException(Code.BAD_MESSAGE_INDEXES, "message index " + index + " is negative or too large");
            }
            indexes[i] = (int) index;
        }
        return indexes;
    }

    /** Where the message of a framed Protobuf value starts: after its header and its message indexes. */
    static int protobufPayloadStart(byte[] value) {
        int[] position = {HEADER_BYTES};
        long count = readZigZag(value, position);
        for (long i = 0; i < count; i++) {
            readZigZag(value, position);
        }
        return position[0];
    }

    /** The text of message indexes for a message: {@code [0, 2]}. */
    static String describe(int[] indexes) {
        return Arrays.toString(indexes);
    }

    private static long readZigZag(byte[] value, int[] position) {
        long raw = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (position[0] >= value.length) {
                throw new BadRecordException(Code.BAD_MESSAGE_INDEXES, "value ends inside its message indexes");
            }
            byte b = value[position[0]++];
            raw |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw new BadRecordException(Code.BAD_MESSAGE_INDEXES, "message index varint longer than 10 bytes");
    }
}
