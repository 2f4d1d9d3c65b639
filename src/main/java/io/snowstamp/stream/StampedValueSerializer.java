package io.snowstamp.stream;

import org.apache.kafka.common.serialization.Serializer;

/** Writes the bytes of a {@link StampedValue}, unchanged. */
public final class StampedValueSerializer implements Serializer<StampedValue> {
    @Override
    public byte[] serialize(String topic, StampedValue data) {
        return data == null ? null : data.value();
    }
}
