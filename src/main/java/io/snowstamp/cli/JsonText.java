package io.snowstamp.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/** One JSON line of a command's {@code --format json} output, written by Jackson from a record or a tree. */
final class JsonText {
    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonText() {
    }

    /** {@code value} as compact JSON: records in component order, null fields written as {@code null}. */
    static String of(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            // records of strings and numbers always serialise: this is a bug, not an input error
            throw new IllegalStateException("cannot format JSON", e);
        }
    }
}
