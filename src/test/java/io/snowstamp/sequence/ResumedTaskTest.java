package io.snowstamp.sequence;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.state.IdHeader;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.testing.AnsweringTicker;
import io.snowstamp.testing.TopologyDrivers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.snowstamp.testing.TopologyDrivers.T0;
import static io.snowstamp.testing.TopologyDrivers.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Kafka Streams suspends a running task (its processors closed) and, assigned it again, resumes it on this instance:
 * {@code init()} runs again on the same processor and store, without a restore — or restores over a store it kept (a
 * dirty close under at-least-once). The store can then hold a reservation the changelog never took (its write expired,
 * a leader out of reach), and a counter resuming inside it must not number in it before it is written again and read
 * back (review of the sequence mode, finding 4).
 */
class ResumedTaskTest {
    @AutoClose
    private final TopologyDrivers drivers = new TopologyDrivers();

    private static Record<byte[], byte[]> order(TagDefinition definition) {
        return new Record<>(bytes("order"), new Envelope(bytes("order"), bytes("{}"), definition).encode(), T0, new RecordHeaders());
    }

    /** G's marker is the lease the next take reads before its own (TestLeases observes the previous newest lease). */
    private static void gLease(SequenceTopologyTest.TestLeases leases) {
        PartitionCheckpoint marker = new PartitionCheckpoint(1, 0, 1, "G", T0, T0, true, false, true);
        leases.take(new org.apache.kafka.streams.processor.TaskId(0, 0), new org.apache.kafka.common.TopicPartition("c", 0),
                new LeaseMark(1, "G"), bytes(SequenceState.CHECKPOINT_KEY), new SequenceStateSerde().serialize(null, marker), "G", false);
    }

    @Test
    void shouldLetNoNumberOfASegmentTheChangelogNeverTookLeaveAResumedTask() {
        SnowstampConfig config = drivers.base(Keys.ID_MODE, "sequence").with(Keys.PROCESSING_GUARANTEE, "at_least_once");
        AnsweringTicker ticker = new AnsweringTicker(System.nanoTime());
        SequenceTopologyTest.TestLeases leases = new SequenceTopologyTest.TestLeases(ticker);
        // the changelog's own acknowledgements: none ever comes (a Streams producer that cannot reach the leader)
        WriteAcks acks = WriteAcks.of(SequenceNames.changelogTopic("dummy"));
        SequenceProcessor processor = new SequenceProcessor(config.sequence(), config.stamp(), config.connection(), 1, () -> T0,
                new SequenceTopologyTest.FakeTail(), leases, acks, null);

        MockProcessorContext<byte[], StampedValue> context = new MockProcessorContext<>();
        KeyValueStore<String, SequenceState> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(SequenceNames.STORE),
                Serdes.String(), new SequenceStateSerde()).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
        KeyValueStore<String, byte[]> tags = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(SequenceNames.TAGS_STORE),
                Serdes.String(), Serdes.ByteArray()).withLoggingDisabled().build();
        tags.init(context.getStateStoreContext(), tags);
        context.addStateStore(tags);
        // restored from the changelog: G's segment 1..10 of order (nothing issued) and G's clean-close marker
        long g = new LeaseMark(1, "G").writer();
        store.put("order", new TagSegment(10, 0, 1, 10, 1, T0, g));
        store.put(SequenceState.CHECKPOINT_KEY, new PartitionCheckpoint(1, 0, 1, "G", T0, T0, true, false, true));
        TagDefinition definition = new TagDefinition(1, 10, 1, T0);
        leases.reservedAfterRestore.put("order", 10L);     // what the lease reader reads of order before each lease record
        gLease(leases);

        processor.init(context);                            // epoch 2, trusts G's marker
        for (int i = 0; i < 10; i++) {
            processor.process(order(definition));           // 1..10; at 6 it reserves 11..20, never acknowledged
        }
        assertThat(((TagSegment) store.get("order")).maxId()).isEqualTo(20);
        assertThat(catchThrowable(() -> processor.process(order(definition))))
                .as("control: 11 waits for the acknowledgement of 11..20 and is dropped").isInstanceOf(TaskMigratedException.class);

        // a second run of the same schedule, where the task is suspended after 10 and resumed (same instance, same store)
        SequenceProcessor resumed = new SequenceProcessor(config.sequence(), config.stamp(), config.connection(), 1, () -> T0,
                new SequenceTopologyTest.FakeTail(), leases, acks, null);
        MockProcessorContext<byte[], StampedValue> context2 = new MockProcessorContext<>();
        KeyValueStore<String, SequenceState> store2 = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(SequenceNames.STORE),
                Serdes.String(), new SequenceStateSerde()).withLoggingDisabled().build();
        store2.init(context2.getStateStoreContext(), store2);
        context2.addStateStore(store2);
        context2.addStateStore(tags);
        store2.put("order", new TagSegment(10, 0, 1, 10, 1, T0, g));
        store2.put(SequenceState.CHECKPOINT_KEY, new PartitionCheckpoint(1, 0, 1, "G", T0, T0, true, false, true));
        gLease(leases);
        resumed.init(context2);
        for (int i = 0; i < 10; i++) {
            resumed.process(order(definition));
        }
        resumed.close();                                    // StreamTask.suspend -> closeTopology: the marker, epoch of this run
        resumed.init(context2);                             // StreamTask.resume -> initializeTopology: no restore
        assertThat(catchThrowable(() -> resumed.process(order(definition))))
                .as("11 waits for 11..20 written again, which no acknowledgement confirms here").isInstanceOf(TaskMigratedException.class);

        List<Long> forwarded = context2.forwarded().stream()
                .map(f -> Long.parseLong(new String(f.record().headers().lastHeader(IdHeader.ID).value(), java.nio.charset.StandardCharsets.UTF_8)))
                .toList();
        assertThat(forwarded).as("11 must not leave before 11..20 is acknowledged and read back").doesNotContain(11L);
    }
}
