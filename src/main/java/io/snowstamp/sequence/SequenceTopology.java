package io.snowstamp.sequence;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.stream.AlignedPartitioner;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.stream.StampedValueSerializer;
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
import org.apache.kafka.streams.state.Stores;

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
        StreamsBuilder builder = new StreamsBuilder();
        builder.addGlobalStore(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(SequenceNames.TAGS_STORE), Serdes.String(), Serdes.ByteArray())
                        .withLoggingDisabled(),     // a global store restores from its own topic
                config.sequence().tagsTopic(),
                Consumed.with(Serdes.String(), Serdes.ByteArray()).withName(SequenceNames.TAGS_SOURCE),
                TagRegistry.Updater::new);
        builder.addStateStore(
                Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SequenceNames.STORE), Serdes.String(), new SequenceStateSerde())
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
                .process(() -> new SequenceProcessor(config.sequence(), config.stamp(), config.connection(), partitions, clock, tail),
                        Named.as(SequenceNames.NUMBERER), SequenceNames.STORE)
                .to(config.topics().output(), Produced.with(Serdes.ByteArray(), stampedValueSerde())
                        .withStreamPartitioner(new AlignedPartitioner())
                        .withName(SequenceNames.SINK));
        return builder.build();
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
