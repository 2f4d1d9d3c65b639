package io.snowstamp.sequence;

import org.apache.kafka.common.errors.SerializationException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * A record on its way from the input to the task of its tag, through the repartition topic (whose
 * key is the tag): the original key and value, and the tag definition the routing step saw — so the
 * task numbers the tag as registered even when its own copy of the tags table is a moment behind.
 *
 * <p>Format, big-endian, version 1:
 * <pre>
 *   byte    version            (1)
 *   int     n, byte[n]         original key (n = -1: null)
 *   int     n, byte[n]         original value (n = -1: null, a tombstone)
 *   byte    0 | 1              definition absent | present, then:
 *   long    start, long step, long revision, long updatedAt
 * </pre>
 *
 * @param definition the registered definition, or null when the tag is not registered (auto-create)
 */
public record Envelope(byte[] key, byte[] value, TagDefinition definition) {
    public static final byte VERSION = 1;

    /** Bytes the envelope adds to key and value. */
    static final int OVERHEAD = 1 + 4 + 4 + 1 + 32;

    public byte[] encode() {
        int size = OVERHEAD + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        ByteBuffer buffer = ByteBuffer.allocate(size).put(VERSION);
        putBytes(buffer, key);
        putBytes(buffer, value);
        if (definition == null) {
            buffer.put((byte) 0);
        } else {
            buffer.put((byte) 1).putLong(definition.start()).putLong(definition.step()).putLong(definition.revision())
                    .putLong(definition.updatedAt());
        }
        return buffer.position() == size ? buffer.array() : java.util.Arrays.copyOf(buffer.array(), buffer.position());
    }

    /** Reads what {@link #encode()} wrote; anything else is a {@link SerializationException}. */
    public static Envelope decode(byte[] data) {
        if (data == null) {
            throw new SerializationException("sequence envelope is null");
        }
        try {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            byte version = buffer.get();
            if (version != VERSION) {
                throw new SerializationException("sequence envelope has format version " + version + ", this snowstamp reads version "
                        + VERSION + " (a newer snowstamp routed it?)");
            }
            byte[] key = getBytes(buffer);
            byte[] value = getBytes(buffer);
            byte present = buffer.get();
            TagDefinition definition = switch (present) {
                case 0 -> null;
                case 1 -> new TagDefinition(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong());
                default -> throw new SerializationException("sequence envelope has definition flag " + present);
            };
            if (buffer.hasRemaining()) {
                throw new SerializationException("sequence envelope has " + buffer.remaining() + " trailing bytes");
            }
            return new Envelope(key, value, definition);
        } catch (BufferUnderflowException | IllegalArgumentException | NegativeArraySizeException e) {
            throw new SerializationException("sequence envelope is truncated or corrupt (" + data.length + " bytes)", e);
        }
    }

    private static void putBytes(ByteBuffer buffer, byte[] bytes) {
        if (bytes == null) {
            buffer.putInt(-1);
        } else {
            buffer.putInt(bytes.length).put(bytes);
        }
    }

    private static byte[] getBytes(ByteBuffer buffer) {
        int length = buffer.getInt();
        if (length < -1 || length > buffer.remaining()) {
            throw new IllegalArgumentException("length " + length);
        }
        if (length == -1) {
            return null;
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }
}
