package io.snowstamp.sequence;

import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * Value format of the tags topic (the key is the tag, UTF-8), big-endian, version 1:
 * <pre>
 *   byte    version     (1)
 *   long    start
 *   long    step
 *   long    revision
 *   long    updatedAt   Unix millis
 * </pre>
 * Unknown versions, truncated or trailing bytes and impossible values are refused with a
 * {@link SerializationException}. A null value (tombstone) is null.
 */
public final class TagDefinitionSerde implements Serde<TagDefinition>, Serializer<TagDefinition>, Deserializer<TagDefinition> {
    public static final byte VERSION = 1;
    private static final int SIZE = 1 + 4 * 8;

    @Override
    public byte[] serialize(String topic, TagDefinition definition) {
        if (definition == null) {
            return null;
        }
        return ByteBuffer.allocate(SIZE).put(VERSION).putLong(definition.start()).putLong(definition.step())
                .putLong(definition.revision()).putLong(definition.updatedAt()).array();
    }

    @Override
    public TagDefinition deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            byte version = buffer.get();
            if (version != VERSION) {
                throw new SerializationException("tag definition has format version " + version + ", this snowstamp reads version "
                        + VERSION + " (a newer snowstamp wrote it?)");
            }
            TagDefinition definition = new TagDefinition(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong());
            if (buffer.hasRemaining()) {
                throw new SerializationException("tag definition has " + buffer.remaining() + " trailing bytes");
            }
            return definition;
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new SerializationException("tag definition is truncated or corrupt (" + data.length + " bytes): " + e.getMessage(), e);
        }
    }

    @Override
    public void configure(java.util.Map<String, ?> configs, boolean isKey) {
        // nothing to configure
    }

    @Override
    public void close() {
        // nothing to release
    }

    @Override
    public Serializer<TagDefinition> serializer() {
        return this;
    }

    @Override
    public Deserializer<TagDefinition> deserializer() {
        return this;
    }
}
