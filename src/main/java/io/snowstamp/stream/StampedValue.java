package io.snowstamp.stream;

/**
 * A stamped value on its way to the sink, carrying the input partition so that
 * {@link AlignedPartitioner} can write it to the same output partition (the partitioner sees the
 * value object before serialization; {@link StampedValueSerializer} then writes only the bytes).
 *
 * @param value the bytes to write; null for a tombstone
 */
public record StampedValue(int partition, byte[] value) {
}
