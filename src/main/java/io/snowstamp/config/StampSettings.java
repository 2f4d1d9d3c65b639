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
 */
public record StampSettings(String jsonField, JsonType jsonType, OnExistingField onExistingField, int maxDepth,
                            boolean provenance, HeaderFormat headerFormat) {

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
                v.choice(Keys.STAMP_HEADER_FORMAT, HeaderFormat.class));
    }
}
