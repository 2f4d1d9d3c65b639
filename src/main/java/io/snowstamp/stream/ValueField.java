package io.snowstamp.stream;

import io.snowstamp.BadRecordException;

/**
 * How a value carries the ID besides the header: a JSON member ({@link JsonValueField}) or a field of a
 * schema-registry value ({@link SchemaValueField}). {@link StampProcessor} calls {@link #inspect} before it
 * issues an ID (a refusal sends the record to the dead-letter topic, and no ID is spent on it), then
 * {@link #write} with the ID. Implementations are thread-safe.
 */
interface ValueField {
    /**
     * Checks the value; the plan {@link #write} follows (opaque to the caller, never null).
     *
     * @throws BadRecordException the value cannot take the ID (to the dead-letter topic)
     */
    Object inspect(byte[] value);

    /**
     * The value with the ID.
     *
     * @param digits the ID's decimal digits when the caller has them already (the text header), else null
     */
    byte[] write(byte[] value, Object plan, long id, byte[] digits);

    /** Bytes the field may add to a value at most, kept free below {@code max.request.size}. */
    int maxGrowth();
}
