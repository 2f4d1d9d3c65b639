package io.snowstamp.stream;

import java.util.Locale;

/**
 * A record that cannot be stamped as configured. {@link DeadLetterHandler} sends the original
 * record to the dead-letter topic with {@link #code()} in header {@code snowstamp-error} and the
 * message in Kafka Streams' own DLQ headers; processing continues.
 * No stack trace is captured: bad input is data, not a bug, and may arrive at full input rate.
 */
public final class BadRecordException extends RuntimeException {
    /** Machine-readable reasons, written lower-case with dashes into {@code snowstamp-error}. */
    public enum Code {
        /** not JSON at all (or not UTF-8 encoded) */
        NOT_JSON,
        /** JSON cut off before its end */
        TRUNCATED,
        /** bytes that are not valid UTF-8 */
        INVALID_UTF8,
        /** valid JSON, but an array, string, number, boolean, null or nothing */
        NOT_OBJECT,
        /** the object already has the field ({@code stamp.on-existing-field=reject}) */
        FIELD_EXISTS,
        /** some object has a key twice */
        DUPLICATE_KEY,
        /** nesting deeper than {@code stamp.max-depth} */
        TOO_DEEP,
        /** another JSON limit (number or string length) */
        LIMIT_EXCEEDED,
        /** content after the object */
        TRAILING_CONTENT,
        /** the stamped record would exceed the producer's max.request.size */
        TOO_LARGE;

        /** The header value, e.g. {@code not-json}. */
        public String header() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private final Code code;

    public BadRecordException(Code code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public Code code() {
        return code;
    }
}
