package io.snowstamp.sequence;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseCodec;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.Leases;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.stream.AlignedPartitioner;
import io.snowstamp.ownership.PreCommitHooks;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.stream.StampedValueSerializer;
import io.snowstamp.ownership.WriteAcks;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Sequence mode ({@code id.mode=sequence}):
 * <pre>
 *   input ──► sequence-route (tag, checks; bad records to the DLQ) ──► &lt;app&gt;-sequence-by-tag-repartition (key = tag, P partitions)
 *         ──► sequence-number (task p: every tag hashed to p; store sequence-segments) ──► output partition p
 *   tags topic ──► global store sequence-tags (read by both steps)
 * </pre>
 * P is the output topic's partition count, so output partition p is written by task p only and
 * holds exactly the tags hashed to p. A pure factory: {@code run} and the tests build the same topology.
 */
public final class SequenceTopology {
    private SequenceTopology() {
    }

    /**
     * @param partitions partition count of the output topic (and so of the repartition topic)
     * @param clock      wall clock in Unix millis (for the times written to the state)
     * @param tail       reads the output partition at task start ({@link SequenceTail#disabled()} to skip)
     */
    public static Topology build(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail) {
        return build(config, partitions, clock, tail, Leases.none());
    }

    /** @param leases where each task takes its lease at start (every number waits for it to be confirmed) */
    public static Topology build(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail, Leases leases) {
        return build(config, partitions, clock, tail, leases, WriteAcks.immediate());
    }

    /** @param acks the changelog's acknowledgements of the segments written ({@link WriteAcks#immediate()} under exactly-once) */
    public static Topology build(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail, Leases leases,
                                 WriteAcks acks) {
        return build(config, partitions, clock, tail, leases, Stores.inMemoryKeyValueStore(SequenceNames.STORE), acks);
    }

    /**
     * @param segmentsStore the segments store: in memory in production. TopologyTestDriver restores nothing from a
     *                      changelog, so its restart tests pass a persistent store, kept on disk across drivers.
     */
    static Topology build(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail, Leases leases,
                          KeyValueBytesStoreSupplier segmentsStore, WriteAcks acks) {
        return build(config, partitions, clock, tail, leases, segmentsStore, acks, null);
    }

    /**
     * @param atStop exactly-once: where each task's {@code issued} waits for a clean stop's last commit
     *               ({@link PreCommitHooks#atCleanStop}); null: nothing waits (at-least-once writes the clean-close marker)
     */
    public static Topology build(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail, Leases leases,
                                 WriteAcks acks, PreCommitHooks atStop) {
        return build(config, partitions, clock, tail, leases, Stores.inMemoryKeyValueStore(SequenceNames.STORE), acks, atStop);
    }

    static Topology build(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail, Leases leases,
                          KeyValueBytesStoreSupplier segmentsStore, WriteAcks acks, PreCommitHooks atStop) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.addGlobalStore(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(SequenceNames.TAGS_STORE), Serdes.String(), Serdes.ByteArray())
                        .withLoggingDisabled(),     // a global store restores from its own topic
                config.sequence().tagsTopic(),
                Consumed.with(Serdes.String(), Serdes.ByteArray()).withName(SequenceNames.TAGS_SOURCE),
                TagRegistry.Updater::new);
        // in memory, restored from its changelog at every task start: one small segment record per tag, and every instance
        // already holds every tag definition in memory (the global store above), so this store is never the larger one;
        // same name, serdes and topic configs as the RocksDB store it replaced, hence the same changelog and format
        builder.addStateStore(
                Stores.keyValueStoreBuilder(segmentsStore, Serdes.String(), new SequenceStateSerde())
                        // no cache: a reservation goes to the changelog producer before the records it covers
                        .withCachingDisabled()
                        // never a tombstone is written, so compaction keeps the newest segment of every tag
                        .withLoggingEnabled(ChangelogWriter.TOPIC_CONFIGS));
        builder.stream(config.topics().input(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(SequenceNames.SOURCE))
                .process(() -> new TagRouter(config.sequence(), config.stamp(), config.connection()), Named.as(SequenceNames.ROUTER))
                .repartition(Repartitioned.<byte[], byte[]>as(SequenceNames.REPARTITION)
                        .withKeySerde(Serdes.ByteArray())
                        .withValueSerde(Serdes.ByteArray())
                        .withNumberOfPartitions(partitions)
                        .withStreamPartitioner(new TagPartitioner()))
                .process(() -> new SequenceProcessor(config.sequence(), config.stamp(), config.connection(), partitions, clock, tail, leases, acks, atStop),
                        Named.as(SequenceNames.NUMBERER), SequenceNames.STORE)
                .to(config.topics().output(), Produced.with(Serdes.ByteArray(), stampedValueSerde())
                        .withStreamPartitioner(new AlignedPartitioner())
                        .withName(SequenceNames.SINK));
        return builder.build();
    }

    /**
     * How the segments changelog's records name their lease (the partition checkpoint does; a tag's segment names none),
     * and what a tag's segment proves may have been issued: numbers of its tag up to its {@code maxId}.
     */
    public static LeaseCodec leaseCodec() {
        SequenceStateSerde serde = new SequenceStateSerde();
        return new LeaseCodec() {
            @Override
            public LeaseMark read(byte[] key, byte[] value) {
                if (key == null || isTag(key) || value == null) {
                    return null;        // a tombstone (snowstamp writes none) names no lease
                }
                SequenceState.PartitionCheckpoint checkpoint = (SequenceState.PartitionCheckpoint) serde.deserialize(null, value);
                return new LeaseMark(checkpoint.epoch(), checkpoint.holder());
            }

            @Override
            public long covered(byte[] key, byte[] value) {
                return isTag(key) && serde.deserialize(null, value) instanceof SequenceState.TagSegment segment ? segment.maxId() : -1;
            }

            @Override
            public String counter(byte[] key, byte[] value) {
                return isTag(key) ? new String(key, StandardCharsets.UTF_8) : null;
            }

            @Override
            public long writer(byte[] key, byte[] value) {
                return isTag(key) && serde.deserialize(null, value) instanceof SequenceState.TagSegment segment ? segment.writer() : -1;
            }

            private boolean isTag(byte[] key) {
                return key != null && !SequenceState.CHECKPOINT_KEY.equals(new String(key, StandardCharsets.UTF_8));
            }
        };
    }

    private static Serde<StampedValue> stampedValueSerde() {
        Deserializer<StampedValue> never = (topic, data) -> {
            throw new UnsupportedOperationException("stamped values are only written");
        };
        return Serdes.serdeFrom(new StampedValueSerializer(), never);
    }

    /**
     * Partitions the repartition topic by tag with {@link Tags#partition(byte[], int)}, whatever
     * {@code kafka.partitioner.class} says: tools compute a tag's partition the same way.
     */
    static final class TagPartitioner implements StreamPartitioner<byte[], byte[]> {
        @Override
        public Optional<Set<Integer>> partitions(String topic, byte[] tag, byte[] value, int numPartitions) {
            return Optional.of(Set.of(Tags.partition(tag, numPartitions)));
        }
    }
}
