package io.snowstamp.schema;

import java.util.List;

/**
 * A schema as the registry's API carries it.
 *
 * @param type       {@code AVRO}, {@code PROTOBUF} or {@code JSON} (JSON Schema; the API leaves the type out for Avro)
 * @param schema     the schema text
 * @param references the other schemas it names (Protobuf imports, JSON Schema {@code $ref}s), passed on unchanged to the output schema
 */
public record RegisteredSchema(String type, String schema, List<Reference> references) {
    public static final String AVRO = "AVRO";
    public static final String PROTOBUF = "PROTOBUF";
    public static final String JSON = "JSON";

    public RegisteredSchema {
        references = List.copyOf(references);
    }

    /** A reference to a version of another subject's schema, under the name the schema uses for it. */
    public record Reference(String name, String subject, int version) {
    }
}
