package io.snowstamp.state;

import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Binary format of {@link WorkerState}, big-endian, version 2:
 * <pre>
 *   byte    version            (2)
 *   short   n, byte[n]         layoutFingerprint (UTF-8)
 *   long    workerId
 *   long    epoch
 *   short   n, byte[n]         holder (UTF-8)
 *   long    acquiredAt         Unix millis
 *   long    heartbeatAt        Unix millis
 *   long    lastId             -1 = none
 *   long    reservedUntil      -1 = none
 *   long    writtenAt          Unix millis, the writer's wall clock when it wrote the state
 * </pre>
 * Version 1 (snowstamp before the audit trail) is the same without {@code writtenAt}; it is still
 * read, with {@code writtenAt} 0 (unknown). Only version 2 is written.
 * Unknown versions, truncated or trailing bytes and impossible values are refused with a
 * {@link SerializationException}: a state that cannot be read must never be taken as "no state".
 * A null value (tombstone) deserializes to null; snowstamp itself never writes one.
 */
public final class WorkerStateSerde implements Serde<WorkerState>, Serializer<WorkerState>, Deserializer<WorkerState> {
    public static final byte VERSION = 2;
    /** The format without {@code writtenAt}: read, never written. */
    public static final byte VERSION_1 = 1;

    @Override
    public byte[] serialize(String topic, WorkerState state) {
        if (state == null) {
            return null;
        }
        byte[] fingerprint = state.layoutFingerprint().getBytes(StandardCharsets.UTF_8);
        byte[] holder = state.holder().getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.allocate(1 + 2 + fingerprint.length + 8 + 8 + 2 + holder.length + 8 * 5);
        buffer.put(VERSION);
        putString(buffer, fingerprint);
        buffer.putLong(state.workerId());
        buffer.putLong(state.epoch());
        putString(buffer, holder);
        buffer.putLong(state.acquiredAt());
        buffer.putLong(state.heartbeatAt());
        buffer.putLong(state.lastId());
        buffer.putLong(state.reservedUntil());
        buffer.putLong(state.writtenAt());
        return buffer.array();
    }

    @Override
    public WorkerState deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            byte version = buffer.get();
            if (version != VERSION && version != VERSION_1) {
                throw new SerializationException("worker-state record has format version " + version
                        + ", this snowstamp reads versions " + VERSION_1 + " and " + VERSION + " (a newer snowstamp wrote it?)");
            }
            String fingerprint = getString(buffer);
            long workerId = buffer.getLong();
            long epoch = buffer.getLong();
            String holder = getString(buffer);
            long acquiredAt = buffer.getLong();
            long heartbeatAt = buffer.getLong();
            long lastId = buffer.getLong();
            long reservedUntil = buffer.getLong();
            long writtenAt = version == VERSION_1 ? 0 : buffer.getLong();
            WorkerState state = new WorkerState(fingerprint, workerId, epoch, holder, acquiredAt, heartbeatAt, lastId,
                    reservedUntil, writtenAt);
            if (buffer.hasRemaining()) {
                throw new SerializationException("worker-state record has " + buffer.remaining() + " trailing bytes");
            }
            return state;
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new SerializationException("worker-state record is truncated or corrupt (" + data.length + " bytes)", e);
        }
    }

    private static void putString(ByteBuffer buffer, byte[] bytes) {
        if (bytes.length > Short.MAX_VALUE) {
            throw new SerializationException("worker-state string too long: " + bytes.length + " bytes");
        }
        buffer.putShort((short) bytes.length);
        buffer.put(bytes);
    }

    private static String getString(ByteBuffer buffer) {
        int length = buffer.getShort();
        if (length < 0) {
            throw new IllegalArgumentException("negative length");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
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
    public Serializer<WorkerState> serializer() {
        return this;
    }

    @Override
    public Deserializer<WorkerState> deserializer() {
        return this;
    }
}
