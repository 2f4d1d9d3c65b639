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
     * The plan {@link #inspectNow} answers for a value that needs the schema registry first: set the record aside,
     * {@link #lookup} beside the stream thread, and ask again once it is done.
     */
    Object LOOKUP = new Object();

    /**
     * Checks the value; the plan {@link #write} follows (opaque to the caller, never null).
     *
     * @throws BadRecordException the value cannot take the ID (to the dead-letter topic)
     */
    Object inspect(byte[] value);

    /**
     * As {@link #inspect}, but never waits: {@link #LOOKUP} when the value needs a request first (a schema not seen yet).
     *
     * @throws BadRecordException the value cannot take the ID (to the dead-letter topic)
     */
    default Object inspectNow(byte[] value) {
        return inspect(value);
    }

    /**
     * Beside the stream thread: whatever {@link #inspect} needs for {@code value} (a registry lookup, its waits through an
     * outage). Done once {@link #inspectNow} answers without {@link #LOOKUP} for it, or the stamper stops; completed
     * exceptionally only by a failure that stops the task (as from {@link #inspect} on the stream thread).
     */
    default java.util.concurrent.CompletableFuture<Void> lookup(byte[] value) {
        return java.util.concurrent.CompletableFuture.completedFuture(null);
    }

    /**
     * The value with the ID.
     *
     * @param digits the ID's decimal digits when the caller has them already (the text header), else null
     */
    byte[] write(byte[] value, Object plan, long id, byte[] digits);

    /** Bytes the field may add to a value at most, kept free below {@code max.request.size}. */
    int maxGrowth();
}
