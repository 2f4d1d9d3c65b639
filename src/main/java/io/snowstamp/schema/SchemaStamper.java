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
import java.util.function.LongSupplier;

/**
 * Finds how a framed value is stamped: per input schema (Protobuf: per schema and message), once, the
 * input schema from the registry, the output schema ({@link AvroEvolution}, {@link ProtobufEvolution})
 * registered under the output subject, and its {@link Stamping}; after that from a bounded cache, so
 * known schemas keep stamping while the registry is down. A schema that cannot take the field is
 * remembered as such too: a flood of bad values does not become a flood of registry requests. An ID
 * the registry does not know is not remembered (the caller decides when to ask again). An output schema
 * the registry refused (the output subject's compatibility) is registered again after a pause that
 * doubles from {@value #FIRST_RETRY_MILLIS} ms up to {@value #LONGEST_RETRY_MILLIS} ms while it stays
 * refused: an operator who relaxes the subject's compatibility sees the values flow without a restart.
 * Thread-safe: the stream threads of one instance share it.
 */
public final class SchemaStamper {
    static final long FIRST_RETRY_MILLIS = 1_000;
    static final long LONGEST_RETRY_MILLIS = 60_000;
    /** The due time of a verdict that is never looked at again (only forgotten past the capacity). */
    private static final long NEVER = Long.MAX_VALUE;

    private final ValueFormat format;
    private final String field;
    private final int protobufFieldNumber;
    private final OnExistingField onExisting;
    private final SubjectStrategy subjects;
    private final String outputTopic;
    private final SchemaRegistryClient registry;
    private final int capacity;
    private final LongSupplier clock;
    /** input key -> its verdict: a {@link Stamping}, or the {@link BadRecordException} that refuses its values. */
    private final ConcurrentHashMap<Object, Entry> cache = new ConcurrentHashMap<>();

    /** A stamper on the system clock. */
    public SchemaStamper(StampSettings stamp, SubjectStrategy subjects, String outputTopic, SchemaRegistryClient registry, int capacity) {
        this(stamp, subjects, outputTopic, registry, capacity, System::currentTimeMillis);
    }

    /**
     * @param capacity input schemas remembered; past it an arbitrary one is forgotten (asked for again when it comes back)
     * @param clock    Unix millis: when a refused output schema is registered again
     */
    public SchemaStamper(StampSettings stamp, SubjectStrategy subjects, String outputTopic, SchemaRegistryClient registry, int capacity,
                         LongSupplier clock) {
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
        this.clock = clock;
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
        Entry entry = cache.get(key);
        Object known = entry == null || (entry.due() != NEVER && clock.getAsLong() >= entry.due())
                ? resolved(key, entry, schemaId, indexes) : entry.verdict();
        if (known instanceof BadRecordException refused) {
            throw refused;
        }
        Stamping stamping = (Stamping) known;
        stamping.check(value);
        return stamping;
    }

    /**
     * Whether the value's schema is remembered (known, or refused and not yet due to be asked again): {@link #inspect}
     * then sends no request.
     *
     * @throws BadRecordException the value is not framed for a schema registry
     */
    public boolean known(byte[] value) {
        int schemaId = WireFormat.schemaId(value);
        int[] indexes = format == ValueFormat.PROTOBUF ? WireFormat.messageIndexes(value) : null;
        Object key = indexes == null || (indexes.length == 1 && indexes[0] == 0) ? Integer.valueOf(schemaId) : new MessageKey(schemaId, indexes);
        Entry entry = cache.get(key);
        // a refusal due to be asked again needs a request: looked up beside the stream thread like a new schema
        return entry != null && (entry.due() == NEVER || clock.getAsLong() < entry.due());
    }

    /** Input schemas remembered now. */
    public int cached() {
        return cache.size();
    }

    /** The verdict the registry gives now, remembered ({@code previous}: the one it replaces, or null). */
    private Object resolved(Object key, Entry previous, int schemaId, int[] indexes) {
        Object verdict = resolve(schemaId, indexes);
        if (verdict instanceof BadRecordException refused && refused.code() == Code.UNKNOWN_SCHEMA) {
            cache.remove(key);      // not remembered: the registry may learn the ID any moment
            return verdict;
        }
        if (verdict instanceof BadRecordException refused && refused.code() == Code.OUTPUT_SCHEMA_REFUSED) {
            // the output subject's compatibility may be relaxed any moment: registered again after a growing pause
            long pause = previous != null && previous.verdict() instanceof BadRecordException before
                    && before.code() == Code.OUTPUT_SCHEMA_REFUSED ? Math.min(previous.pause() * 2, LONGEST_RETRY_MILLIS) : FIRST_RETRY_MILLIS;
            verdict = new BadRecordException(Code.OUTPUT_SCHEMA_REFUSED, refused.getMessage() + "; registered again after "
                    + pause / 1000 + " s (the pause doubles up to " + LONGEST_RETRY_MILLIS / 1000 + " s while it is refused)");
            remember(key, new Entry(verdict, clock.getAsLong() + pause, pause));
            return verdict;
        }
        remember(key, new Entry(verdict, NEVER, 0));
        return verdict;
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

    private void remember(Object key, Entry resolved) {
        if (cache.size() >= capacity && !cache.containsKey(key)) {
            Iterator<Object> keys = cache.keySet().iterator();
            if (keys.hasNext()) {
                keys.next();
                keys.remove();
            }
        }
        cache.put(key, resolved);
    }

    /**
     * A verdict and when it is looked at again ({@link #NEVER}: kept until forgotten past the capacity).
     *
     * @param pause the last pause before {@code due} (a refused output schema's, which doubles)
     */
    private record Entry(Object verdict, long due, long pause) {
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
