package io.snowstamp;

import java.util.Locale;

/**
 * A record that cannot be stamped as configured. {@code stream.DeadLetterHandler} sends the original
 * record to the dead-letter topic with {@link #code()} in header {@code snowstamp-error} and the
 * message in Kafka Streams' own DLQ headers; processing continues. In the root package because two
 * layers throw it: {@code stream} (JSON values, sequence tags) and {@code schema} (values framed for a
 * schema registry, whose refusals {@code schema.SchemaStamper} also caches per schema).
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
        TOO_LARGE,
        /** sequence mode: the record has no tag (null or empty key, or no tag field) */
        NO_TAG,
        /** sequence mode: the tag is not valid text (not UTF-8, control characters, too long, not a string) */
        INVALID_TAG,
        /** sequence mode: the tag is not registered and {@code sequence.auto-create=false} */
        UNKNOWN_TAG,
        /** Avro/Protobuf: not framed for a schema registry (no value, too short, first byte not 0) */
        NO_MAGIC_BYTE,
        /** Avro/Protobuf: the registry has no schema of the value's ID */
        UNKNOWN_SCHEMA,
        /** Avro/Protobuf: the value's schema is of the other format */
        WRONG_SCHEMA_TYPE,
        /** Avro/Protobuf: the value's schema does not parse */
        INVALID_SCHEMA,
        /** Avro: the value's schema is not a record */
        NOT_RECORD,
        /** Avro: the value's record contains itself, so no field can be appended to it */
        RECURSIVE_RECORD,
        /** Protobuf: the message indexes are cut off or name no message */
        BAD_MESSAGE_INDEXES,
        /** Protobuf: {@code stamp.protobuf-field-number} is used or reserved in the message, or no number is free */
        FIELD_NUMBER_TAKEN,
        /** Avro: the schema refers to other schemas */
        SCHEMA_REFERENCES,
        /** Avro/Protobuf: the value is not exactly one value of its schema (bytes missing or left over) */
        INVALID_VALUE,
        /** Avro/Protobuf: the registry refused the output schema (incompatible with the output subject) */
        OUTPUT_SCHEMA_REFUSED;

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
