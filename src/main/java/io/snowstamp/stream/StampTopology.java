package io.snowstamp.stream;

import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.ownership.EarlyLeases;
import io.snowstamp.ownership.PredecessorFence;
import io.snowstamp.ownership.PreCommitStore;
import io.snowstamp.ownership.PreCommitHooks;
import io.snowstamp.json.JsonIdSplicer;

import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.IdSettings;
import io.snowstamp.config.SchemaRegistrySettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.config.StampSettings;
import io.snowstamp.lease.LeaseCodec;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.Leases;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.resume.TailProbe;
import io.snowstamp.schema.HttpSchemaRegistry;
import io.snowstamp.schema.SchemaStamper;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;

import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The stamper: source (input topic) -> {@link StampProcessor} (with the {@code worker-state}
 * store) -> sink (output topic, same partition). A pure factory: {@code run} and the tests build
 * the same topology.
 */
public final class StampTopology {
    private StampTopology() {
    }

    /**
     * @param clock     wall clock in Unix millis ({@code CachedClock::millis} in production)
     * @param tailProbe reads the output partition tail at task start ({@link TailProbe#disabled()} to skip)
     */
    public static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe) {
        return build(config, clock, tailProbe, new StamperStats());
    }

    /** @param stats where the tasks publish what they do (metrics, health, state endpoint) */
    public static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe, StamperStats stats) {
        return build(config, clock, tailProbe, stats, worker -> -1, PredecessorFence.none());
    }

    /**
     * @param registryMarks worker -> the highest ID a released claim of the worker registry recorded for
     *                      it (-1: none), read once at start: every task resumes above it
     * @param fence         ends a previous owner's open transaction at each task start (exactly-once)
     */
    public static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe, StamperStats stats,
                                 java.util.function.LongUnaryOperator registryMarks, PredecessorFence fence) {
        return build(config, clock, tailProbe, stats, registryMarks, fence, Leases.none());
    }

    /** @param leases where each task takes its lease (every ID waits for it to be confirmed) */
    public static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe, StamperStats stats,
                                 java.util.function.LongUnaryOperator registryMarks, PredecessorFence fence, Leases leases) {
        return build(config, clock, tailProbe, stats, registryMarks, fence, leases, null, WriteAcks.immediate());
    }

    /**
     * @param early takes each task's lease when its restore ends, before its start (null: at its start)
     * @param acks  tells each task which of its worker-state writes the changelog acknowledged ({@link WriteAcks#of}, fed by
     *              the producer Kafka Streams writes the changelog with; {@link WriteAcks#immediate()} where no broker answers)
     */
    public static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe, StamperStats stats,
                                 java.util.function.LongUnaryOperator registryMarks, PredecessorFence fence, Leases leases,
                                 EarlyLeases early, WriteAcks acks) {
        return build(config, clock, tailProbe, stats, registryMarks, fence, leases, early, acks,
                Stores.inMemoryKeyValueStore(Names.STORE));
    }

    /**
     * Where the ID goes in the value besides the header, as {@code stamp.*} says: a JSON member, a field of
     * schema-registry values (one registry client and schema cache for all tasks), or nowhere (null).
     */
    static ValueField valueField(SnowstampConfig config, LongSupplier clock, StamperStats stats) {
        StampSettings stamp = config.stamp();
        if (stamp.schemaRegistryValues()) {
            SchemaRegistrySettings registry = config.schemaRegistry();
            SchemaStamper stamper = new SchemaStamper(stamp, registry.subjectStrategy(), config.topics().output(),
                    HttpSchemaRegistry.of(registry), registry.cacheSize(), clock);
            // JSON Schema values: the JSON mode's check and splice on the text after the frame, the ID always a number
            JsonIdSplicer json = stamp.valueFormat() == StampSettings.ValueFormat.JSON_SCHEMA
                    ? new JsonIdSplicer(stamp.schemaField(), StampSettings.JsonType.NUMBER, stamp.onExistingField(), stamp.maxDepth()) : null;
            return new SchemaValueField(stamper, json, stats.schemaRegistry(), clock, registry.recheckInterval());
        }
        JsonIdSplicer json = JsonIdSplicer.of(stamp);
        return json == null ? null : new JsonValueField(json, stamp.jsonField());
    }

    /** How the worker-state changelog's records name their lease (each holds one partition's whole state). */
    public static LeaseCodec leaseCodec() {
        WorkerStateSerde serde = new WorkerStateSerde();
        return new LeaseCodec() {
            @Override
            public LeaseMark read(byte[] key, byte[] value) {
                WorkerState state = serde.deserialize(null, value);
                return state == null ? null : new LeaseMark(state.epoch(), state.holder());
            }

            @Override
            public long covered(byte[] key, byte[] value) {
                WorkerState state = serde.deserialize(null, value);
                return state == null ? -1 : state.highWaterMark();
            }
        };
    }

    /**
     * Whether a task start skips the inputs its predecessor already stamped ({@link io.snowstamp.resume.StampedInputs}):
     * at-least-once (exactly-once never commits them twice), with the provenance header that names them and the tail
     * guard that reads them back.
     */
    public static boolean skipsStampedInputs(SnowstampConfig config) {
        return skipsStampedInputs(config.connection(), config.stamp(), config.recovery());
    }

    static boolean skipsStampedInputs(ConnectionSettings connection, StampSettings stamp, io.snowstamp.config.RecoverySettings recovery) {
        return connection.processingGuarantee() == ConnectionSettings.Guarantee.AT_LEAST_ONCE && stamp.provenance() && recovery.tailGuard();
    }

    /** How much further a reservation reaches where the output tail decides a resume ({@link #tailDecides}). */
    static final int TAIL_DECIDES_RESERVATION_FACTOR = 10;

    /**
     * Whether a task start resumes above the committed output tail rather than the worker state's bounds: exactly-once
     * with the tail guard. There the previous owner's open transactions are fenced before the tail is read, and a
     * fenced owner commits nothing, so the committed output holds every ID that can ever be read; the state's
     * {@code lastId} and reservations are then records for people and for starts without the tail guard
     * ({@code changelog export}/{@code import}), not what the next start must resume above.
     */
    static boolean tailDecides(ConnectionSettings connection, io.snowstamp.config.RecoverySettings recovery) {
        return connection.processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2 && recovery.tailGuard();
    }

    /**
     * @param workerStore the worker-state store: in memory in production (see below). TopologyTestDriver restores
     *                    nothing from a changelog, so its restart tests pass a persistent store, kept on disk across
     *                    drivers: the processor sees the same restored state either way.
     */
    static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe, StamperStats stats,
                          java.util.function.LongUnaryOperator registryMarks, PredecessorFence fence, Leases leases,
                          EarlyLeases early, WriteAcks acks, KeyValueBytesStoreSupplier workerStore) {
        return build(config, clock, tailProbe, stats, registryMarks, fence, leases, early, acks, workerStore,
                valueField(config, clock, stats));
    }

    /** The same with the ID's {@code values} field given (null: header only): topology tests of a value field's lookups. */
    static Topology build(SnowstampConfig config, LongSupplier clock, TailProbe tailProbe, StamperStats stats,
                          java.util.function.LongUnaryOperator registryMarks, PredecessorFence fence, Leases leases,
                          EarlyLeases early, WriteAcks acks, KeyValueBytesStoreSupplier workerStore, ValueField values) {
        Topology topology = new Topology();
        // the exact lastId at every commit but under exactly-once with the tail guard (PreCommitHooks)
        PreCommitHooks hooks = stats.hooks(!tailDecides(config.connection(), config.recovery()));
        topology.addSource(Names.SOURCE, new ByteArrayDeserializer(), new ByteArrayDeserializer(), config.topics().input());
        topology.addProcessor(Names.PROCESSOR,
                () -> new StampProcessor(config.ids(), config.stamp(), config.recovery(), config.connection(), clock,
                        tailProbe, stats, hooks, registryMarks, fence, leases, early, acks, values, config.topics().input()), Names.SOURCE);
        // in memory: a task holds ONE small record, and a RocksDB instance per task cost ~4 MB of state directory (4 GB at
        // 1,024 partitions). Same name, serdes and topic configs as the RocksDB store it replaced, so the same changelog
        // topic and record format: a deployment upgrades in place. Kafka Streams restores an in-memory store from the
        // changelog's start at every task start (ProcessorStateManager.initializeStoreOffsets ignores any checkpoint for
        // it): compaction leaves one record per partition plus the active segment (segment.ms). The safety argument never
        // relied on a local copy: under exactly-once a crash wiped it anyway, and a new owner never had one.
        topology.addStateStore(PreCommitStore.builder(
                Stores.keyValueStoreBuilder(workerStore, Serdes.Integer(), new WorkerStateSerde())
                        // no cache: a cached put reaches the changelog only when its task's commit flushes the cache, right
                        // before Kafka Streams flushes the producer for that task, one broker round trip per task that wrote
                        // (a 1,024-task commit took ~4 s). Uncached, every put is sent when made (PreCommitHooks)
                        .withCachingDisabled()
                        // never a tombstone is written, so compaction keeps the newest state of every partition; 10-minute
                        // segments keep what a partition's next owner restores small (see TOPIC_CONFIGS)
                        .withLoggingEnabled(ChangelogWriter.TOPIC_CONFIGS), hooks, tailProbe::released, early),
                Names.PROCESSOR);
        // the records a task sets aside while its next ID waits (a takeover, a reservation read back; a schema lookup; the
        // lead under id.on-excess-lead=pause), logged so that they commit with their input offsets: a crash loses none.
        // RocksDB where a wait has no bound — a lead pause lasts until the wall clock catches up, a registry outage until
        // the registry answers — so that what arrives meanwhile spills to disk. Elsewhere a wait ends within the
        // acknowledgement wait (AckWait) and in memory costs nothing to open: 1,024 RocksDB stores doubled a start at
        // 1,024 busy partitions (benchmarks.md).
        boolean unbounded = config.ids().onExcessLead() == IdSettings.OnExcessLead.PAUSE || config.stamp().schemaRegistryValues();
        StoreBuilder<KeyValueStore<Long, Record<byte[], byte[]>>> pending =
                Stores.keyValueStoreBuilder(unbounded ? Stores.persistentKeyValueStore(Names.PENDING_STORE)
                                : Stores.inMemoryKeyValueStore(Names.PENDING_STORE), Serdes.Long(), new PendingRecordSerde())
                        .withLoggingEnabled(Map.of());
        // at-least-once counts commits: a record taken out is deleted once its output is durable (PendingStore)
        boolean exactlyOnce = config.connection().processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2;
        topology.addStateStore(exactlyOnce ? pending : PendingStore.builder(pending), Names.PROCESSOR);
        topology.addSink(Names.SINK, config.topics().output(), new ByteArraySerializer(), new StampedValueSerializer(),
                new AlignedPartitioner(), Names.PROCESSOR);
        return topology;
    }
}
