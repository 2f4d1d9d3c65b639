package io.snowstamp.sequence;

import static io.snowstamp.testing.TopologyDrivers.bytes;
import static io.snowstamp.testing.TopologyDrivers.header;
import static org.assertj.core.api.Assertions.assertThat;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.Leases;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.lease.Ticker;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.TopologyDrivers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The covered offset and the takeover wait (the eighth review): a checkpoint before the first number must not move the
 * covered offset past the previous owner's records, which the tail read again at the first number starts from. Judged on
 * the output partition as the tail reads it (read_uncommitted, aborted records included).
 */
class TakeoverCheckpointTest {

    @AutoClose
    private final TopologyDrivers drivers = new TopologyDrivers();
    private final AtomicLong clock = drivers.clock();
    private final SequenceTopologyTest.FakeTail tail = new SequenceTopologyTest.FakeTail();
    private final LateWriteStore segments = new LateWriteStore(org.apache.kafka.streams.state.Stores.persistentKeyValueStore(SequenceNames.STORE));
    private Leases leases = Leases.none();
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> input;
    private TestOutputTopic<byte[], byte[]> output;

    /** A ticker that moves only when the test (or a waiting lease check) parks it; every park is a verifier round. */
    static final class RoundTicker implements Ticker {
        long now = System.nanoTime();
        final List<PartitionLease> confirming = new ArrayList<>();

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void park(long nanos) {
            now += nanos;
            confirming.forEach(lease -> LeaseRounds.confirmed(lease, now, now));
        }
    }

    /**
     * Leases as the verifier grants them with the real term (1.5 s) and takeover wait: the own record read back and
     * confirmed once at the take; the takeover wait ends only once the ticker moved past it.
     */
    static final class RealTermLeases implements Leases {
        final RoundTicker ticker;
        private PartitionLease newest;

        RealTermLeases(RoundTicker ticker) {
            this.ticker = ticker;
        }

        @Override
        public LeaseGuard take(TaskId task, TopicPartition changelog, LeaseMark mine, byte[] key, byte[] value, String name,
                               boolean restoreAgain) {
            LeaseMark previous = newest == null ? null : newest.mine();
            newest = new PartitionLease(changelog.partition(), mine, PartitionLease.NO_RESTORE_CHECK, LeaseRounds.TERM_NANOS,
                    LeaseRounds.TAKEOVER_WAIT_NANOS);
            if (previous != null) {
                LeaseRounds.observe(newest, 0, previous, -1);
            }
            LeaseRounds.observe(newest, 1, mine, -1);
            LeaseRounds.confirmed(newest, ticker.now, ticker.now);
            ticker.confirming.clear();
            ticker.confirming.add(newest);
            return LeaseGuard.of(newest, task, name, ticker);
        }
    }

    private SnowstampConfig config(String... pairs) {
        return drivers.base(Keys.ID_MODE, "sequence").with(pairs);
    }

    private void start(SnowstampConfig config) {
        driver = drivers.start(SequenceTopology.build(config, 1, clock::get, tail, leases, segments, WriteAcks.immediate()),
                KafkaSettings.streams(config.connection(), config.topics()));
        input = driver.createInputTopic(config.topics().input(), new ByteArraySerializer(), new ByteArraySerializer());
        TestInputTopic<String, TagDefinition> tags = driver.createInputTopic(config.sequence().tagsTopic(), new StringSerializer(),
                new TagDefinitionSerde());
        tags.pipeInput("order", new TagDefinition(1001, 100, 1, TopologyDrivers.T0));
        output = driver.createOutputTopic(config.topics().output(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private List<Long> pipeUnread(String tag, int count) {
        for (int i = 0; i < count; i++) {
            input.pipeInput(bytes(tag), bytes("{\"n\":" + i + "}"));
        }
        return output.readRecordsToList().stream().map(r -> Long.parseLong(header(r, IdHeader.ID))).toList();
    }

    private List<Long> pipe(String tag, int count) {
        List<Long> numbers = pipeUnread(tag, count);
        numbers.forEach(n -> tail.append(tag, n));
        return numbers;
    }

    private void advance(int millis) {
        clock.addAndGet(millis);
        driver.advanceWallClockTime(Duration.ofMillis(millis));
    }

    private PartitionCheckpoint checkpoint() {
        return (PartitionCheckpoint) driver.getKeyValueStore(SequenceNames.STORE).get(SequenceState.CHECKPOINT_KEY);
    }

    private List<String> twice() {
        List<String> seen = new ArrayList<>();
        List<String> twice = new ArrayList<>();
        for (var record : tail.log) {
            if (record.getKey() == null) {
                continue;
            }
            String pair = record.getKey() + "/" + record.getValue();
            if (seen.contains(pair)) {
                twice.add(pair);
            }
            seen.add(pair);
        }
        return twice;
    }

    /**
     * Z, exactly-once with sequence.checkpoint-interval=1s (allowed: 100 ms .. 1 h): past its own takeover wait, numbers
     * 1001.. ({@code committed} of them, in the output), then a checkpoint covers them; returns the configuration.
     */
    private SnowstampConfig cutOffAfter(RoundTicker ticker, int committed) {
        leases = new RealTermLeases(ticker);
        SnowstampConfig config = config(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "1s");
        start(config);
        ticker.park(LeaseRounds.TAKEOVER_WAIT_NANOS + 1);
        assertThat(pipe("order", committed)).hasSize(committed).startsWith(1001L).endsWith(1000L + committed);
        advance(1000);
        return config;
    }

    /**
     * Z numbers 1001..1003 (committed,
     * in the output), then 1004, 1005 in a transaction it can no longer commit and is cut off. N restores, scans the
     * output (up to 1003), takes its lease. Z's 1004, 1005 land in the output (read_uncommitted sees them). N's periodic
     * checkpoint runs during its takeover wait (mayWrite is true: confirmed within the term) and moves the covered offset
     * to the end, past 1004, 1005, without raising the tag. N's first number reads the tail again "after the old holder's
     * lease ran out" — from the moved covered offset: it never sees 1004, 1005, and numbers 1004 again.
     */
    @Test
    void shouldNotMoveTheCoveredOffsetPastThePreviousOwnersRecordsBeforeTheFirstNumber() {
        RoundTicker ticker = new RoundTicker();
        SnowstampConfig config = cutOffAfter(ticker, 3);
        List<Long> inFlight = pipeUnread("order", 2);            // Z's open transaction: never committed
        assertThat(inFlight).containsExactly(1004L, 1005L);
        drivers.stop(driver);                                     // Z cut off (exactly-once: no marker)

        start(config);                                            // N: restore, scan up to 1003, lease taken
        long coveredAtStart = checkpoint().coveredOffset();
        inFlight.forEach(n -> tail.append("order", n));           // Z's records land (its transaction aborts later)
        ticker.park(Duration.ofMillis(1000).toNanos());           // a verifier round within N's takeover wait
        advance(1000);                                            // N's checkpoint punctuation, before its first number
        long coveredBeforeFirst = checkpoint().coveredOffset();

        List<Long> n = pipe("order", 1);                          // N's first number: waits out the term, rescans
        assertThat(coveredBeforeFirst).as("no checkpoint moved it before the first number").isEqualTo(coveredAtStart);
        assertThat(n).as("above Z's aborted 1004, 1005: read_uncommitted readers may have seen them").containsExactly(1006L);
        assertThat(twice()).as("(tag, number) in the output partition twice").isEmpty();
    }

    /**
     * The output topic created again during a takeover, before the new holder's first number: Z's numbers sent in the
     * takeover land at the new topic's first offsets, below the covered offset the tail is read again from. The read
     * again starts at the new topic's beginning when the partition ends below that offset (a read-only review found
     * the gap: N numbered 1006 again).
     */
    @Test
    void shouldReadTheWholeOutputAgainAtTheFirstNumberWhenItWasCreatedAgainDuringTheTakeover() {
        SnowstampConfig config = cutOffAfter(new RoundTicker(), 5);     // covered 5
        List<Long> inFlight = pipeUnread("order", 2);             // 1006, 1007 on their way
        drivers.stop(driver);                                     // Z cut off

        start(config);                                            // N: restore, scan from 5 (nothing new), lease taken
        assertThat(checkpoint().coveredOffset()).isEqualTo(5);
        tail.log.clear();                                         // the output topic created again
        inFlight.forEach(n -> tail.append("order", n));           // Z's records land at its offsets 0, 1

        assertThat(pipe("order", 1)).as("above Z's 1006, 1007 in the new topic").containsExactly(1008L);
        assertThat(twice()).as("(tag, number) in the output partition twice").isEmpty();
    }
}
