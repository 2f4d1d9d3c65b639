package io.snowstamp.schema;

import java.util.Locale;

/**
 * A value, or the schema it was written with, that cannot take the ID field as configured: the record
 * goes to the dead-letter topic with {@link #reason()}. An unreachable registry is not this (see
 * {@code RegistryUnavailableException}): no record is refused for an outage.
 * No stack trace is captured: bad input is data, and may arrive at full input rate.
 */
public final class SchemaRefusedException extends RuntimeException {
    /** Why, written lower-case with dashes where a machine reads it (the dead letter's {@code snowstamp-error}). */
    public enum Reason {
        /** no value, shorter than the 5-byte frame, or a first byte other than 0 */
        NO_MAGIC_BYTE,
        /** the registry knows no schema of that ID */
        UNKNOWN_SCHEMA,
        /** the schema is of another kind than configured (a Protobuf schema in Avro mode, ...) */
        WRONG_SCHEMA_TYPE,
        /** the schema text does not parse */
        INVALID_SCHEMA,
        /** Avro: the top-level type is not a record (a union, an array, a primitive) */
        NOT_RECORD,
        /** Protobuf: the message indexes are cut off or name no message of the schema */
        BAD_MESSAGE_INDEXES,
        /** the schema has the field already ({@code stamp.on-existing-field=reject}, or a type the ID cannot overwrite) */
        FIELD_EXISTS,
        /** Protobuf: the configured field number is used or reserved in the message, or none is free */
        FIELD_NUMBER_TAKEN,
        /** the schema refers to other schemas (references), which is not supported */
        SCHEMA_REFERENCES,
        /** the value does not decode with its schema (only read where a field is overwritten) */
        INVALID_VALUE,
        /** the registry refused the output schema (incompatible with the output subject, or invalid) */
        OUTPUT_SCHEMA_REFUSED;

        /** e.g. {@code no-magic-byte} */
        public String code() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private final Reason reason;

    public SchemaRefusedException(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
