package io.snowstamp.schema;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import io.snowstamp.config.StampSettings.OnExistingField;

/**
 * The output schema of a JSON Schema input: the input's top-level {@code properties} plus the field as
 * {@code {"type": "integer"}}, last, not required. Everything else (keywords, {@code required},
 * {@code additionalProperties}, {@code $defs}, member order) stays as it was, so the output schema
 * accepts every input value with the field added, and a reader of the output subject reads values
 * written without it. The values themselves are checked and spliced by the JSON mode's code.
 */
public final class JsonSchemaEvolution {
    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonSchemaEvolution() {
    }

    /**
     * What the values of {@code schemaText} get: the property added, or (the schema declares it already) as
     * {@code onExisting} says: {@code reject} refuses them; {@code keep} and {@code overwrite} keep the schema where
     * its property takes an integer (each value is then spliced as the policy says), and refuse them otherwise.
     */
    public static Evolution evolve(String schemaText, String field, OnExistingField onExisting) {
        JsonNode root;
        try {
            root = JSON.readTree(schemaText);
        } catch (JsonProcessingException e) {
            throw new BadRecordException(Code.INVALID_SCHEMA, "the value's JSON schema does not parse: " + e.getOriginalMessage());
        }
        if (!(root instanceof ObjectNode schema)) {
            throw new BadRecordException(Code.NOT_RECORD, "the value's JSON schema is " + (root == null ? "empty" : root.toString())
                    + ", not an object schema: a property cannot be added to it");
        }
        JsonNode type = schema.get("type");
        if (type != null && !names(type, "object")) {
            throw new BadRecordException(Code.NOT_RECORD, "the value's JSON schema has type " + type
                    + ", not object: a property cannot be added to its values");
        }
        JsonNode properties = schema.get("properties");
        if (properties != null && !properties.isObject()) {
            throw new BadRecordException(Code.INVALID_SCHEMA, "the value's JSON schema has 'properties' that is not an object");
        }
        String name = schema.path("title").isTextual() ? schema.get("title").asText() : null;
        JsonNode existing = properties == null ? null : properties.get(field);
        if (existing != null) {
            if (onExisting == OnExistingField.REJECT) {
                throw new BadRecordException(Code.FIELD_EXISTS, "the value's JSON schema has a property '" + field
                        + "' already (stamp.on-existing-field=reject)");
            }
            if (!takesInteger(existing)) {
                throw new BadRecordException(Code.FIELD_EXISTS, "the value's JSON schema has a property '" + field + "' of "
                        + existing + ", which an integer ID does not meet (stamp.on-existing-field=" + onExisting + ")");
            }
            return new Evolution(Evolution.Kind.KEEP, schemaText, 0, name);
        }
        ObjectNode output = schema.deepCopy();
        output.withObject("/properties").putObject(field).put("type", "integer");
        return new Evolution(Evolution.Kind.APPEND, output.toString(), 0, name);
    }

    /** Whether a property's schema accepts an integer: no type, or a type that names integer or number. */
    private static boolean takesInteger(JsonNode property) {
        if (property.isBoolean()) {
            return property.asBoolean();
        }
        JsonNode type = property.get("type");
        return type == null || names(type, "integer") || names(type, "number");
    }

    /** {@code "type": "x"} or {@code "type": [..., "x", ...]}. */
    private static boolean names(JsonNode type, String name) {
        if (type.isTextual()) {
            return type.asText().equals(name);
        }
        for (JsonNode one : type) {
            if (one.isTextual() && one.asText().equals(name)) {
                return true;
            }
        }
        return false;
    }
}
