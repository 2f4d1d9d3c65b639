package io.snowstamp.schema;

import io.snowstamp.config.SchemaRegistrySettings.SubjectStrategy;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.config.StampSettings.ValueFormat;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;

import java.util.Arrays;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds how a framed value is stamped: per input schema (Protobuf: per schema and message), once, the
 * input schema from the registry, the output schema ({@link AvroEvolution}, {@link ProtobufEvolution})
 * registered under the output subject, and its {@link Stamping}; after that from a bounded cache, so
 * known schemas keep stamping while the registry is down. A schema that cannot take the field is
 * remembered as such too: a flood of bad values does not become a flood of registry requests. An ID
 * the registry does not know is not remembered (the caller decides when to ask again).
 * Thread-safe: the stream threads of one instance share it.
 */
public final class SchemaStamper {
    private final ValueFormat format;
    private final String field;
    private final int protobufFieldNumber;
    private final OnExistingField onExisting;
    private final SubjectStrategy subjects;
    private final String outputTopic;
    private final SchemaRegistryClient registry;
    private final int capacity;
    /** input key -> {@link Stamping}, or the {@link BadRecordException} that refuses its values. */
    private final ConcurrentHashMap<Object, Object> cache = new ConcurrentHashMap<>();

    /**
     * @param capacity input schemas remembered; past it an arbitrary one is forgotten (asked for again when it comes back)
     */
    public SchemaStamper(StampSettings stamp, SubjectStrategy subjects, String outputTopic, SchemaRegistryClient registry, int capacity) {
        if (!stamp.schemaRegistryValues()) {
            throw new IllegalArgumentException("not a schema-registry value format: " + stamp.valueFormat());
        }
        this.format = stamp.valueFormat();
        this.field = stamp.schemaField();
        this.protobufFieldNumber = stamp.protobufFieldNumber();
        this.onExisting = stamp.onExistingField();
        this.subjects = subjects;
        this.outputTopic = outputTopic;
        this.registry = registry;
        this.capacity = capacity;
    }

    /**
     * How this value is stamped, once the value is checked to be exactly one value of its schema. Issues no ID.
     *
     * @throws BadRecordException       the value cannot be stamped (to the dead-letter topic)
     * @throws RegistryUnavailableException the registry is needed and does not answer (retry later)
     */
    public Stamping inspect(byte[] value) {
        int schemaId = WireFormat.schemaId(value);
        int[] indexes = format == ValueFormat.PROTOBUF ? WireFormat.messageIndexes(value) : null;
        // the common cases (every Avro value, the first message of a Protobuf file) need no key object
        Object key = indexes == null || (indexes.length == 1 && indexes[0] == 0) ? Integer.valueOf(schemaId) : new MessageKey(schemaId, indexes);
        Object known = cache.get(key);
        if (known == null) {
            known = resolve(schemaId, indexes);
            if (!(known instanceof BadRecordException refused && refused.code() == Code.UNKNOWN_SCHEMA)) {
                remember(key, known);       // an unknown ID is not remembered: the registry may learn it any moment
            }
        }
        if (known instanceof BadRecordException refused) {
            throw refused;
        }
        Stamping stamping = (Stamping) known;
        stamping.check(value);
        return stamping;
    }

    /**
     * Whether the value's schema is remembered (known or refused): {@link #inspect} then sends no request.
     *
     * @throws BadRecordException the value is not framed for a schema registry
     */
    public boolean known(byte[] value) {
        int schemaId = WireFormat.schemaId(value);
        int[] indexes = format == ValueFormat.PROTOBUF ? WireFormat.messageIndexes(value) : null;
        Object key = indexes == null || (indexes.length == 1 && indexes[0] == 0) ? Integer.valueOf(schemaId) : new MessageKey(schemaId, indexes);
        return cache.containsKey(key);
    }

    /** Input schemas remembered now. */
    public int cached() {
        return cache.size();
    }

    private Object resolve(int schemaId, int[] indexes) {
        try {
            RegisteredSchema input = registry.schema(schemaId);
            String expected = format == ValueFormat.AVRO ? RegisteredSchema.AVRO : RegisteredSchema.PROTOBUF;
            if (!input.type().equals(expected)) {
                throw new BadRecordException(Code.WRONG_SCHEMA_TYPE, "schema ID " + schemaId + " is a " + input.type()
                        + " schema, not " + expected + " (stamp.value-format=" + format + ")");
            }
            Evolution evolution;
            String subject;
            if (format == ValueFormat.AVRO) {
                if (!input.references().isEmpty()) {
                    throw new BadRecordException(Code.SCHEMA_REFERENCES, "Avro schema ID " + schemaId
                            + " refers to other schemas, which snowstamp does not resolve");
                }
                evolution = AvroEvolution.evolve(input.schema(), field, onExisting);
                subject = subjects.subject(outputTopic, evolution.fullName());
            } else {
                // the field's number is the one the output subject gives it already: its versions agree on the ID
                subject = subjects.subject(outputTopic, ProtobufEvolution.fullName(input.schema(), indexes));
                RegisteredSchema previous = registry.latest(subject);
                evolution = ProtobufEvolution.evolve(input.schema(), indexes, field, protobufFieldNumber, onExisting,
                        previous == null || !previous.type().equals(RegisteredSchema.PROTOBUF) ? null : previous.schema());
            }
            int outputId = registry.register(subject, new RegisteredSchema(input.type(), evolution.schema(), input.references()));
            return format == ValueFormat.AVRO ? Stamping.avro(input.schema(), schemaId, evolution, field, outputId)
                    : Stamping.protobuf(schemaId, evolution, outputId);
        } catch (BadRecordException refused) {
            return refused;
        }
    }

    private void remember(Object key, Object resolved) {
        if (cache.size() >= capacity) {
            Iterator<Object> keys = cache.keySet().iterator();
            if (keys.hasNext()) {
                keys.next();
                keys.remove();
            }
        }
        cache.put(key, resolved);
    }

    /** A Protobuf schema and the path of one of its messages. */
    private record MessageKey(int schemaId, int[] indexes) {
        @Override
        public boolean equals(Object other) {
            return other instanceof MessageKey key && key.schemaId == schemaId && Arrays.equals(key.indexes, indexes);
        }

        @Override
        public int hashCode() {
            return 31 * schemaId + Arrays.hashCode(indexes);
        }

        @Override
        public String toString() {
            return schemaId + WireFormat.describe(indexes);
        }
    }
}
