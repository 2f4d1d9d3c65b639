package io.snowstamp.schema;

/**
 * Base-128 varints as Avro ({@code long}: zig-zag first) and Protobuf ({@code int64}, tags: plain) write
 * them: seven bits a byte, least significant group first, the high bit set on every byte but the last.
 */
final class Varints {
    private Varints() {
    }

    /** Avro's zig-zag mapping: small magnitudes of either sign become small unsigned numbers. */
    static long zigZag(long value) {
        return (value << 1) ^ (value >> 63);
    }

    /** Bytes {@link #write} takes for {@code value} read as unsigned: 1..10. */
    static int size(long value) {
        int bits = 64 - Long.numberOfLeadingZeros(value | 1);
        return (bits + 6) / 7;
    }

    /** Writes {@code value} (unsigned) at {@code offset}; returns the offset after it. */
    static int write(long value, byte[] into, int offset) {
        while ((value & ~0x7FL) != 0) {
            into[offset++] = (byte) ((value & 0x7F) | 0x80);
            value >>>= 7;
        }
        into[offset++] = (byte) value;
        return offset;
    }

    /** The varint as bytes. */
    static byte[] bytes(long value) {
        byte[] out = new byte[size(value)];
        write(value, out, 0);
        return out;
    }
}
