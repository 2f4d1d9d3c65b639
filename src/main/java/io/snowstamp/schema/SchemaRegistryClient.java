package io.snowstamp.schema;

import io.snowstamp.BadRecordException;

/**
 * The calls of a schema registry's Confluent-compatible API the stamper makes.
 * Implementations are thread-safe.
 */
public interface SchemaRegistryClient {
    /**
     * The schema of an ID.
     *
     * @throws BadRecordException       {@code UNKNOWN_SCHEMA} when the registry has no such ID
     * @throws RegistryUnavailableException when the registry cannot answer now (retry later)
     */
    RegisteredSchema schema(int id);

    /**
     * The latest schema of a subject, or null when the subject has none.
     *
     * @throws RegistryUnavailableException when the registry cannot answer now (retry later)
     */
    RegisteredSchema latest(String subject);

    /**
     * Registers a schema under a subject (or finds it there) and returns its ID.
     *
     * @throws BadRecordException       {@code OUTPUT_SCHEMA_REFUSED} when the registry refuses it (incompatible, invalid)
     * @throws RegistryUnavailableException when the registry cannot answer now (retry later)
     */
    int register(String subject, RegisteredSchema schema);
}
