package io.snowstamp.sequence;

import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Value format of the {@code sequence-segments} store and its changelog, big-endian, version 4:
 * <pre>
 *   byte    version            (4)
 *   byte    kind               1 = tag segment, 2 = partition checkpoint
 * kind 1 (key: the tag, UTF-8):
 *   long    maxId
 *   long    issued             the last number issued when written (segmentStart - 1: none of the segment)
 *   long    segmentStart       -1 = raised by the tail scan
 *   long    step               0 = raised by the tail scan
 *   long    revision
 *   long    updatedAt          Unix millis
 *   long    writer             the holder that wrote it: its lease epoch (high 32 bits), a hash of its name (low 32)
 * kind 2 (key: U+0000 "checkpoint"):
 *   int     partitions
 *   long    coveredOffset      -1 = none
 *   long    epoch
 *   short   n, byte[n]         holder (UTF-8)
 *   long    acquiredAt         Unix millis
 *   long    checkpointAt       Unix millis
 *   byte    closed             1 = the clean-close marker, 0 = none
 *   byte    exactlyOnce        1 = the holder ran exactly-once, 0 = at-least-once
 * </pre>
 * Versions 1 to 3 (written by earlier builds) are read too. Version 3 is the same without {@code writer}, which reads
 * as 0 (not known: a clean-close marker behind it is not trusted), and without {@code exactlyOnce}, which reads as 0
 * (not known: an exactly-once holder after it resumes as after an at-least-once one). Version 2 also lacks {@code closed},
 * which reads as 0 (no marker: the next holder resumes as after a crash). Version 1 also lacks
 * {@code issued}, which reads as {@code maxId} — what was issued is unknown, so the tag resumes above its
 * segment, as those builds did. Only version 4 is written. Unknown versions or kinds, truncated or trailing bytes and impossible
 * values are refused with a {@link SerializationException}: a state that cannot be read must never be
 * taken as "no state". A null value (tombstone) is null; snowstamp never writes one.
 */
public final class SequenceStateSerde implements Serde<SequenceState>, Serializer<SequenceState>, Deserializer<SequenceState> {
    public static final byte VERSION = 4;
    /** The format without {@code issued} and {@code closed}, still read. */
    static final byte VERSION_1 = 1;
    /** The format without {@code closed} and {@code exactlyOnce}, still read. */
    static final byte VERSION_2 = 2;
    /** The format without {@code exactlyOnce}, still read. */
    static final byte VERSION_3 = 3;
    static final byte KIND_SEGMENT = 1;
    static final byte KIND_CHECKPOINT = 2;

    @Override
    public byte[] serialize(String topic, SequenceState state) {
        if (state == null) {
            return null;
        }
        if (state instanceof TagSegment segment) {
            return ByteBuffer.allocate(2 + 7 * 8).put(VERSION).put(KIND_SEGMENT)
                    .putLong(segment.maxId()).putLong(segment.issued()).putLong(segment.segmentStart()).putLong(segment.step())
                    .putLong(segment.revision()).putLong(segment.updatedAt()).putLong(segment.writer()).array();
        }
        PartitionCheckpoint checkpoint = (PartitionCheckpoint) state;
        byte[] holder = checkpoint.holder().getBytes(StandardCharsets.UTF_8);
        if (holder.length > Short.MAX_VALUE) {
            throw new SerializationException("sequence checkpoint holder too long: " + holder.length + " bytes");
        }
        return ByteBuffer.allocate(2 + 4 + 8 + 8 + 2 + holder.length + 8 + 8 + 1 + 1).put(VERSION).put(KIND_CHECKPOINT)
                .putInt(checkpoint.partitions()).putLong(checkpoint.coveredOffset()).putLong(checkpoint.epoch())
                .putShort((short) holder.length).put(holder)
                .putLong(checkpoint.acquiredAt()).putLong(checkpoint.checkpointAt()).put((byte) (checkpoint.closed() ? 1 : 0))
                .put((byte) (checkpoint.exactlyOnce() ? 1 : 0)).array();
    }

    @Override
    public SequenceState deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            byte version = buffer.get();
            if (version != VERSION && version != VERSION_3 && version != VERSION_2 && version != VERSION_1) {
                throw new SerializationException("sequence state record has format version " + version
                        + ", this snowstamp reads versions " + VERSION_1 + " to " + VERSION + " (a newer snowstamp wrote it?)");
            }
            byte kind = buffer.get();
            SequenceState state = switch (kind) {
                case KIND_SEGMENT -> {
                    long maxId = buffer.getLong();
                    long issued = version == VERSION_1 ? maxId : buffer.getLong();
                    yield new TagSegment(maxId, issued, buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong(),
                            version == VERSION ? buffer.getLong() : 0);
                }
                case KIND_CHECKPOINT -> {
                    int partitions = buffer.getInt();
                    long covered = buffer.getLong();
                    long epoch = buffer.getLong();
                    int length = buffer.getShort();
                    if (length < 0) {
                        throw new IllegalArgumentException("negative length");
                    }
                    byte[] holder = new byte[length];
                    buffer.get(holder);
                    long acquiredAt = buffer.getLong();
                    long checkpointAt = buffer.getLong();
                    boolean closed = version >= VERSION_3 && flag(buffer.get(), "closed");
                    yield new PartitionCheckpoint(partitions, covered, epoch, new String(holder, StandardCharsets.UTF_8),
                            acquiredAt, checkpointAt, closed, version == VERSION && flag(buffer.get(), "exactlyOnce"), version == VERSION);
                }
                default -> throw new SerializationException("sequence state record has unknown kind " + kind);
            };
            if (buffer.hasRemaining()) {
                throw new SerializationException("sequence state record has " + buffer.remaining() + " trailing bytes");
            }
            return state;
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new SerializationException("sequence state record is truncated or corrupt (" + data.length + " bytes)", e);
        }
    }

    private static boolean flag(byte flag, String name) {
        if (flag != 0 && flag != 1) {
            throw new IllegalArgumentException(name + " flag " + flag);
        }
        return flag == 1;
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
    public Serializer<SequenceState> serializer() {
        return this;
    }

    @Override
    public Deserializer<SequenceState> deserializer() {
        return this;
    }
}
