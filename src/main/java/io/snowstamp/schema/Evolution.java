package io.snowstamp.schema;

/**
 * How values of one input schema become values of the output schema.
 *
 * @param kind        how each value changes
 * @param schema      the output schema's text (the input's when the field is there already)
 * @param fieldNumber Protobuf: the number of the field whose tag is appended; 0 for Avro
 * @param fullName    the record's (Avro) or message's (Protobuf) full name, which the record subject strategies use
 */
public record Evolution(Kind kind, String schema, int fieldNumber, String fullName) {
    /** How a value of the input schema becomes one of the output schema. */
    public enum Kind {
        /** the field's bytes appended (Protobuf: also where the field exists, as the last value of a field wins) */
        APPEND,
        /** the value as it is: the input schema has the field already ({@code stamp.on-existing-field=keep}) */
        KEEP,
        /** Avro, the field there already ({@code overwrite}): the field's varint replaced by the ID's, in place */
        OVERWRITE
    }
}
