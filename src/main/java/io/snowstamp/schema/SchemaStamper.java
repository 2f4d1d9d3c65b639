package io.snowstamp.schema;

import io.snowstamp.config.SchemaRegistrySettings.SubjectStrategy;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.config.StampSettings.ValueFormat;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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
 * A registry that lost its schemas (restarted empty, restored from an older backup) is found by
 * {@link #recheck}, which its caller runs now and then beside the stream threads: a remembered output ID that
 * the registry no longer serves as the schema registered for it is registered again, and the input schema
 * asked for again (its ID may name another schema now). Nothing is asked per value.
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
    /**
     * Input keys {@link #recheck} found unknown to a registry that lost its schemas: asked for at each later round until
     * the producer registers them again, so the output schema is registered again before their next value comes.
     */
    private final java.util.Set<Object> lost = ConcurrentHashMap.newKeySet();
    /** Counts the changes to {@link #cache}, each counted after it is made: a front entry taken before one is not used after. */
    private final AtomicInteger changes = new AtomicInteger();
    /**
     * The last entry taken per slot of schema IDs (Avro, JSON Schema; Protobuf keeps its message key): the stream threads'
     * every value without a key object and a map lookup (profiled: the lookup was the Avro path's largest cost after the
     * walk at 80 bytes). Written only when a slot changes; racing writes publish whole entries (a record's final fields).
     */
    private final Front[] front = new Front[16];

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
        Entry entry = entry(schemaId, indexes);
        return checked(due(entry) ? resolved(key(schemaId, indexes), entry, schemaId, indexes) : entry.verdict(), value);
    }

    /**
     * {@link #inspect} without a request: null when it would send one (the schema not seen yet, or refused and due to be
     * asked again). One lookup for the stream thread's every value: asking whether the schema is remembered, then
     * inspecting, cost two.
     *
     * @throws BadRecordException as {@link #inspect}
     */
    public Stamping remembered(byte[] value) {
        Entry entry = entry(WireFormat.schemaId(value), format == ValueFormat.PROTOBUF ? WireFormat.messageIndexes(value) : null);
        // a refusal due to be asked again needs a request: looked up beside the stream thread like a new schema
        return due(entry) ? null : checked(entry.verdict(), value);
    }

    /** The cache's entry for a value's schema (null: none), from {@link #front} where it holds the current one. */
    private Entry entry(int schemaId, int[] indexes) {
        if (indexes != null) {
            return cache.get(key(schemaId, indexes));
        }
        int change = changes.get();     // before the map: a change made after this read invalidates what is taken now
        Front taken = front[schemaId & (front.length - 1)];
        if (taken != null && taken.schemaId == schemaId && taken.change == change) {
            return taken.entry;
        }
        Entry entry = cache.get(schemaId);
        if (entry != null) {
            front[schemaId & (front.length - 1)] = new Front(schemaId, change, entry);
        }
        return entry;
    }

    /** The common cases (every Avro value, the first message of a Protobuf file) need no key object of their own. */
    private static Object key(int schemaId, int[] indexes) {
        return indexes == null || (indexes.length == 1 && indexes[0] == 0) ? Integer.valueOf(schemaId) : new MessageKey(schemaId, indexes);
    }

    /** Whether the registry is asked for this entry's schema now: never asked, or refused and due. */
    private boolean due(Entry entry) {
        return entry == null || (entry.due() != NEVER && clock.getAsLong() >= entry.due());
    }

    /** The verdict's stamping, once the value is checked against it; a refusal thrown. */
    private static Stamping checked(Object verdict, byte[] value) {
        if (verdict instanceof BadRecordException refused) {
            throw refused;
        }
        Stamping stamping = (Stamping) verdict;
        stamping.check(value);
        return stamping;
    }

    /** The field's name ({@code stamp.schema-field}). */
    public String field() {
        return field;
    }

    /** Input schemas remembered now. */
    public int cached() {
        return cache.size();
    }

    /** The verdict the registry gives now, remembered ({@code previous}: the one it replaces, or null). */
    private Object resolved(Object key, Entry previous, int schemaId, int[] indexes) {
        Resolved answer = resolve(schemaId, indexes);
        Object verdict = answer.verdict();
        if (verdict instanceof BadRecordException refused && refused.code() == Code.UNKNOWN_SCHEMA) {
            forget(key);      // not remembered: the registry may learn the ID any moment
            return verdict;
        }
        if (verdict instanceof BadRecordException refused && refused.code() == Code.OUTPUT_SCHEMA_REFUSED) {
            // the output subject's compatibility may be relaxed any moment: registered again after a growing pause
            long pause = previous != null && previous.verdict() instanceof BadRecordException before
                    && before.code() == Code.OUTPUT_SCHEMA_REFUSED ? Math.min(previous.pause() * 2, LONGEST_RETRY_MILLIS) : FIRST_RETRY_MILLIS;
            verdict = new BadRecordException(Code.OUTPUT_SCHEMA_REFUSED, refused.getMessage() + "; registered again after "
                    + pause / 1000 + " s (the pause doubles up to " + LONGEST_RETRY_MILLIS / 1000 + " s while it is refused)");
            remember(key, new Entry(verdict, clock.getAsLong() + pause, pause, null));
            return verdict;
        }
        remember(key, new Entry(verdict, NEVER, 0, answer.output()));
        if (verdict instanceof Stamping stamping) {
            staleHolders(key, stamping.outputId(), answer.output());
        }
        return verdict;
    }

    /**
     * Another input schema's remembered output ID that the registry has just given to a different output schema: the
     * registry lost its schemas and numbers them afresh. That one is due to be asked again at once (its values wait set
     * aside meanwhile), without waiting for the next {@link #recheck}.
     */
    private void staleHolders(Object key, int outputId, RegisteredSchema output) {
        for (Map.Entry<Object, Entry> other : cache.entrySet()) {
            Entry entry = other.getValue();
            if (!other.getKey().equals(key) && entry.verdict() instanceof Stamping held && held.outputId() == outputId
                    && entry.output() != null && !entry.output().equals(output)) {
                replace(other.getKey(), entry, new Entry(entry.verdict(), 0, 0, entry.output()));
            }
        }
    }

    /**
     * Asks the registry, for each remembered output ID, whether it still serves the schema that ID was registered for
     * (one {@code GET /schemas/ids/{id}} each). Where it does not (the ID is unknown, or names another schema: the
     * registry lost its schemas), the input schema is asked for again and the output schema registered again, and
     * its values get the new output ID from then on; where the input ID is unknown now, its values wait set aside
     * and are asked for as a new schema's. Values stamped between the registry's loss and this call carry the old ID.
     *
     * @return what was registered again (empty when the registry still has every output schema)
     * @throws RegistryUnavailableException the registry does not answer (the rest is asked at the next call)
     */
    public List<Reset> recheck() {
        List<Reset> resets = new ArrayList<>();
        for (Object key : lost) {
            if (cache.containsKey(key)) {
                lost.remove(key);       // a value's own lookup found it meanwhile
                continue;
            }
            Object verdict = resolved(key, null, schemaIdOf(key), indexesOf(key));
            if (!(verdict instanceof BadRecordException refused && refused.code() == Code.UNKNOWN_SCHEMA)) {
                lost.remove(key);
                resets.add(new Reset(key.toString(), -1, false, verdict instanceof Stamping again ? again.outputId() : -1,
                        verdict instanceof BadRecordException refused ? refused : null));
            }
        }
        for (Map.Entry<Object, Entry> cached : cache.entrySet()) {
            Entry entry = cached.getValue();
            if (!(entry.verdict() instanceof Stamping stamping) || entry.due() != NEVER || entry.output() == null) {
                continue;
            }
            RegisteredSchema served;
            try {
                served = registry.schema(stamping.outputId());
            } catch (BadRecordException unknown) {
                served = null;
            }
            if (entry.output().equals(served)) {
                continue;
            }
            Object key = cached.getKey();
            Object verdict;
            try {
                verdict = resolved(key, entry, schemaIdOf(key), indexesOf(key));
            } catch (RegistryUnavailableException outage) {
                // its values wait set aside and are looked up like a new schema's, through the outage
                replace(key, entry, new Entry(entry.verdict(), 0, 0, entry.output()));
                throw outage;
            }
            if (verdict instanceof Stamping again && again.outputId() == stamping.outputId() && served != null) {
                // the same ID for the same schema: the registry only prints it otherwise; compared with its print from now on
                Entry now = cache.get(key);
                if (now != null && now.verdict() == again) {
                    replace(key, now, new Entry(again, NEVER, 0, served));
                }
                continue;
            }
            if (verdict instanceof BadRecordException refused && refused.code() == Code.UNKNOWN_SCHEMA) {
                lost.add(key);
            }
            resets.add(new Reset(key.toString(), stamping.outputId(), served != null,
                    verdict instanceof Stamping again ? again.outputId() : -1, verdict instanceof BadRecordException refused ? refused : null));
        }
        return resets;
    }

    private static int schemaIdOf(Object key) {
        return key instanceof MessageKey message ? message.schemaId() : (Integer) key;
    }

    private int[] indexesOf(Object key) {
        return key instanceof MessageKey message ? message.indexes() : format == ValueFormat.PROTOBUF ? new int[] {0} : null;
    }

    /**
     * An input schema whose output ID the registry no longer served as registered.
     *
     * @param input     the input schema ID (Protobuf: and message indexes)
     * @param before    the output ID its values had; -1: found unknown at an earlier round, and registered again now
     * @param reused    whether the registry serves another schema under {@code before} (else it does not know it)
     * @param after     the output ID its values get now; -1 when they get none ({@code refused})
     * @param refused   why its values are refused now (e.g. the input ID is unknown), or null
     */
    public record Reset(String input, int before, boolean reused, int after, BadRecordException refused) {
    }

    private Resolved resolve(int schemaId, int[] indexes) {
        try {
            RegisteredSchema input = registry.schema(schemaId);
            String expected = switch (format) {
                case AVRO -> RegisteredSchema.AVRO;
                case PROTOBUF -> RegisteredSchema.PROTOBUF;
                default -> RegisteredSchema.JSON;
            };
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
            } else if (format == ValueFormat.JSON_SCHEMA) {
                evolution = JsonSchemaEvolution.evolve(input.schema(), field, onExisting);
                if (evolution.fullName() == null && subjects != SubjectStrategy.TOPIC) {
                    throw new BadRecordException(Code.INVALID_SCHEMA, "JSON schema ID " + schemaId + " has no title, the name"
                            + " schema-registry.subject-strategy=" + subjects + " names its output subject after");
                }
                subject = subjects.subject(outputTopic, evolution.fullName());
            } else {
                // the field's number is the one the output subject gives it already: its versions agree on the ID
                subject = subjects.subject(outputTopic, ProtobufEvolution.fullName(input.schema(), indexes));
                RegisteredSchema previous = registry.latest(subject);
                evolution = ProtobufEvolution.evolve(input.schema(), indexes, field, protobufFieldNumber, onExisting,
                        previous == null || !previous.type().equals(RegisteredSchema.PROTOBUF) ? null : previous.schema());
            }
            RegisteredSchema output = new RegisteredSchema(input.type(), evolution.schema(), input.references());
            int outputId = registry.register(subject, output);
            return new Resolved(switch (format) {
                case AVRO -> Stamping.avro(input.schema(), schemaId, evolution, field, outputId);
                case PROTOBUF -> Stamping.protobuf(schemaId, evolution, outputId);
                default -> Stamping.json(outputId);
            }, output);
        } catch (BadRecordException refused) {
            return new Resolved(refused, null);
        }
    }

    /** Every change to {@link #cache} goes through these three, which count it. */
    private void replace(Object key, Entry previous, Entry entry) {
        cache.replace(key, previous, entry);
        changes.incrementAndGet();
    }

    private void forget(Object key) {
        cache.remove(key);
        changes.incrementAndGet();
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
        changes.incrementAndGet();
    }

    /**
     * A verdict and when it is looked at again ({@link #NEVER}: kept until forgotten past the capacity).
     *
     * @param pause  the last pause before {@code due} (a refused output schema's, which doubles)
     * @param output a {@link Stamping}'s output schema as the registry serves it under its output ID ({@link #recheck}), else null
     */
    private record Entry(Object verdict, long due, long pause, RegisteredSchema output) {
    }

    /** A cache entry as {@link #entry} took it, with the count of changes then. */
    private record Front(int schemaId, int change, Entry entry) {
    }

    /** A verdict and, for a {@link Stamping}, the output schema registered for its output ID. */
    private record Resolved(Object verdict, RegisteredSchema output) {
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
