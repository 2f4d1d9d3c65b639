package io.snowstamp.config;

import java.util.Locale;

/**
 * The {@code stamp.*} keys: what is written into a stamped record besides the ID header, in both ID
 * modes (the JSON field, the provenance header).
 *
 * @param jsonField       field to inject the ID into, or null for header-only stamping
 * @param jsonType        how the injected field is written
 * @param onExistingField what to do with a JSON object that already has the field
 * @param maxDepth        deepest nesting of objects and arrays accepted in JSON field mode
 * @param provenance      whether to add the {@code snowstamp-src} header ({@code topic/partition/offset} of the input)
 * @param headerFormat    how the ID and provenance headers are written
 * @param valueFormat     what the values are: JSON (or anything, without {@code jsonField}), or framed for a schema registry
 * @param schemaField     Avro/Protobuf: the field the ID is written to
 * @param protobufFieldNumber Protobuf: the new field's number, 0 for one above the highest used or reserved
 */
public record StampSettings(String jsonField, JsonType jsonType, OnExistingField onExistingField, int maxDepth,
                            boolean provenance, HeaderFormat headerFormat, ValueFormat valueFormat, String schemaField,
                            int protobufFieldNumber) {
    /** Avro names and Protobuf identifiers alike. */
    private static final java.util.regex.Pattern FIELD_NAME = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

    public StampSettings {
        if (valueFormat != ValueFormat.JSON && jsonField != null) {
            throw new ConfigException(Keys.STAMP_JSON_FIELD, jsonField, "empty with stamp.value-format=" + valueFormat
                    + " (the field is stamp.schema-field)");
        }
        if (!FIELD_NAME.matcher(schemaField).matches()) {
            throw new ConfigException(Keys.STAMP_SCHEMA_FIELD, schemaField,
                    "a name of 1-128 letters, digits and underscores, not starting with a digit (an Avro and Protobuf field name)");
        }
    }

    /** JSON values (the settings before schema-registry values existed). */
    public StampSettings(String jsonField, JsonType jsonType, OnExistingField onExistingField, int maxDepth, boolean provenance,
                         HeaderFormat headerFormat) {
        this(jsonField, jsonType, onExistingField, maxDepth, provenance, headerFormat, ValueFormat.JSON, "id", 0);
    }

    /** What the values are, which decides where the ID can go besides the header. */
    public enum ValueFormat {
        /** JSON objects with {@code stamp.json-field}; else any bytes, passed unchanged */
        JSON,
        /** Avro framed for a schema registry (byte 0, 4-byte schema ID, Avro binary) */
        AVRO,
        /** Protobuf framed for a schema registry (byte 0, 4-byte schema ID, message indexes, message) */
        PROTOBUF,
        /** JSON framed for a schema registry with a JSON Schema (byte 0, 4-byte schema ID, JSON text) */
        JSON_SCHEMA;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Whether values are framed for a schema registry (Avro, Protobuf or JSON Schema). */
    public boolean schemaRegistryValues() {
        return valueFormat != ValueFormat.JSON;
    }

    /** How the ID and provenance headers are written (see {@code state.IdHeader}). */
    public enum HeaderFormat {
        /** {@code snowstamp-id}: decimal digits; {@code snowstamp-src}: {@code topic/partition/offset}. */
        TEXT,
        /** {@code snowid}: the ID, {@code snowsrc}: the input offset, 8 bytes big-endian each. */
        COMPACT;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How the injected JSON field is written. */
    public enum JsonType {
        NUMBER, STRING;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What to do with a JSON object that already has the field. */
    public enum OnExistingField {
        REJECT, OVERWRITE, KEEP;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    static StampSettings from(Values v) {
        String jsonField = v.string(Keys.STAMP_JSON_FIELD);
        return new StampSettings(jsonField.isEmpty() ? null : jsonField,
                v.choice(Keys.STAMP_JSON_TYPE, JsonType.class),
                v.choice(Keys.STAMP_ON_EXISTING_FIELD, OnExistingField.class),
                v.intInRange(Keys.STAMP_MAX_DEPTH, 1, 1000),
                v.bool(Keys.STAMP_PROVENANCE),
                v.choice(Keys.STAMP_HEADER_FORMAT, HeaderFormat.class),
                v.choice(Keys.STAMP_VALUE_FORMAT, ValueFormat.class),
                v.string(Keys.STAMP_SCHEMA_FIELD),
                v.isSet(Keys.STAMP_PROTOBUF_FIELD_NUMBER) ? protobufFieldNumber(v) : 0);
    }

    private static int protobufFieldNumber(Values v) {
        // 1..536870911 (2^29 - 1), without 19000-19999, which Protobuf keeps for itself
        int number = v.intInRange(Keys.STAMP_PROTOBUF_FIELD_NUMBER, 1, 536_870_911);
        if (number >= 19_000 && number <= 19_999) {
            throw new ConfigException(Keys.STAMP_PROTOBUF_FIELD_NUMBER, number, "1..536870911 except 19000..19999 (reserved by Protobuf)");
        }
        return number;
    }
}
