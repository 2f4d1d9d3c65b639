package io.snowstamp.schema;

import io.snowstamp.BadRecordException;

/**
 * Whether the payload of a framed value is exactly one value of its writer schema: walked field by
 * field without building objects ({@link AvroValueCheck}, {@link ProtobufValueCheck}). A value with
 * bytes missing or left over would be stamped into something a reader fails on or misreads (readers
 * ignore trailing bytes, so an Avro ID appended after them would be read from the wrong place).
 * Implementations are immutable and thread-safe.
 */
interface ValueCheck {
    /**
     * @throws BadRecordException {@code INVALID_VALUE} when the payload is not one value of the schema
     */
    void check(byte[] value);
}
