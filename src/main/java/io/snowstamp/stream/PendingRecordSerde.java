package io.snowstamp.stream;

import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.api.Record;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A record held back while its partition is paused ({@code id.on-excess-lead=pause}), stored in
 * the logged {@code pending-records} store until it can be stamped. Format, version 1, big-endian:
 * {@code byte version, long timestamp, int keyLength (-1 = null), key, int valueLength (-1 = null),
 * value, int headerCount, then per header: short nameLength, name (UTF-8), int valueLength (-1 = null), value}.
 */
public final class PendingRecordSerde implements Serde<Record<byte[], byte[]>>, Serializer<Record<byte[], byte[]>>,
        Deserializer<Record<byte[], byte[]>> {
    private static final byte VERSION = 1;

    @Override
    public byte[] serialize(String topic, Record<byte[], byte[]> record) {
        int size = 1 + 8 + 4 + length(record.key()) + 4 + length(record.value()) + 4;
        Header[] headers = record.headers().toArray();
        for (Header header : headers) {
            size += 2 + header.key().getBytes(StandardCharsets.UTF_8).length + 4 + length(header.value());
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.put(VERSION).putLong(record.timestamp());
        putBytes(buffer, record.key());
        putBytes(buffer, record.value());
        buffer.putInt(headers.length);
        for (Header header : headers) {
            byte[] name = header.key().getBytes(StandardCharsets.UTF_8);
            buffer.putShort((short) name.length).put(name);
            putBytes(buffer, header.value());
        }
        return buffer.array();
    }

    @Override
    public Record<byte[], byte[]> deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            if (buffer.get() != VERSION) {
                throw new SerializationException("pending record has an unknown format version");
            }
            long timestamp = buffer.getLong();
            byte[] key = getBytes(buffer);
            byte[] value = getBytes(buffer);
            int count = buffer.getInt();
            Headers headers = new RecordHeaders();
            for (int i = 0; i < count; i++) {
                byte[] name = new byte[buffer.getShort()];
                buffer.get(name);
                headers.add(new String(name, StandardCharsets.UTF_8), getBytes(buffer));
            }
            return new Record<>(key, value, timestamp, headers);
        } catch (BufferUnderflowException | NegativeArraySizeException e) {
            throw new SerializationException("pending record is truncated or corrupt (" + data.length + " bytes)", e);
        }
    }

    private static int length(byte[] bytes) {
        return bytes == null ? 0 : bytes.length;
    }

    private static void putBytes(ByteBuffer buffer, byte[] bytes) {
        buffer.putInt(bytes == null ? -1 : bytes.length);
        if (bytes != null) {
            buffer.put(bytes);
        }
    }

    private static byte[] getBytes(ByteBuffer buffer) {
        int length = buffer.getInt();
        if (length < 0) {
            return null;
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        // nothing to configure
    }

    @Override
    public void close() {
        // nothing to release
    }

    @Override
    public Serializer<Record<byte[], byte[]>> serializer() {
        return this;
    }

    @Override
    public Deserializer<Record<byte[], byte[]>> deserializer() {
        return this;
    }
}
