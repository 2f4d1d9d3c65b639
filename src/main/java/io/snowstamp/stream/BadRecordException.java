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
        NOT_JSON, NOT_OBJECT, FIELD_EXISTS, DUPLICATE_FIELD, TRAILING_CONTENT;

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
