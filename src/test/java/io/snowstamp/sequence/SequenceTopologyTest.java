package io.snowstamp.sequence;

import io.snowstamp.ownership.WriteAcks;

import static io.snowstamp.testing.TopologyDrivers.INSTANCE;
import static io.snowstamp.testing.TopologyDrivers.T0;
import static io.snowstamp.testing.TopologyDrivers.bytes;
import static io.snowstamp.testing.TopologyDrivers.header;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.state.IdHeader;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.testing.TopologyDrivers;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Sequence mode through {@link TopologyTestDriver}: one task runs both steps (route, repartition,
 * number) on partition 0, with the tags topic as a global store, restarts on the same state
 * directory, and a fake output tail that holds what the test read from the output topic (plus what a
 * test adds: records of an aborted transaction or of a lost state) and can lose the rest (records
 * never sent before a crash).
 */
class SequenceTopologyTest {

    @AutoClose
    private final TopologyDrivers drivers = new TopologyDrivers();
    private final AtomicLong clock = drivers.clock();
    private final FakeTail tail = new FakeTail();
    /** Every record piped to the tags topic: the driver's global store is in memory, so each start replays them. */
    private final List<Map.Entry<String, TagDefinition>> definitions = new ArrayList<>();

    /** Where tasks take their leases: none (every check passes) unless a test of the resume rule puts {@link TestLeases} here. */
    private io.snowstamp.lease.Leases leases = io.snowstamp.lease.Leases.none();
    /** The changelog's acknowledgements: every write at once, unless a test of the wait for them puts others here. */
    private WriteAcks writeAcks = WriteAcks.immediate();
    /** The segments store: persistent, with writes that land late at its next opening ({@link LateWriteStore}). */
    private final LateWriteStore segments = new LateWriteStore(org.apache.kafka.streams.state.Stores.persistentKeyValueStore(SequenceNames.STORE));
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> input;
    private TestInputTopic<String, TagDefinition> tags;
    private TestOutputTopic<byte[], byte[]> output;
    private TestOutputTopic<byte[], byte[]> dlq;
    private TestOutputTopic<String, SequenceState> changelog;

    /** The output partition as the tail reads it: per offset, the tag and number of a record; records how it was asked. */
    static final class FakeTail implements SequenceTail {
        /** tag (null: a record without one, which the scan skips) and number, in offset order */
        final List<Map.Entry<String, Long>> log = new ArrayList<>();
        final List<Long> scannedFrom = new ArrayList<>();
        int endOffsetCalls;
        /** The partition's first offset: retention deleted what lies below it. */
        int logStart;
        /** Runs inside each endOffset call (a read that takes long). */
        Runnable onEndOffset = () -> { };

        void append(String tag, long number) {
            log.add(new java.util.AbstractMap.SimpleEntry<>(tag, number));
        }

        /** {@code count} records the scan skips (no tag), to move the end offset. */
        void pad(int count) {
            for (int i = 0; i < count; i++) {
                append(null, -1);
            }
        }

        @Override
        public Scan scan(int partition, long fromOffset) {
            scannedFrom.add(fromOffset);
            int from = (int) Math.max(logStart, fromOffset);
            Map<String, Long> highest = new HashMap<>();
            for (Map.Entry<String, Long> record : log.subList(Math.min(from, log.size()), log.size())) {
                if (record.getKey() != null) {
                    highest.merge(record.getKey(), record.getValue(), Math::max);
                }
            }
            return new Scan(highest, Math.max(0, log.size() - from), from, log.size(), 1);
        }

        @Override
        public long endOffset(int partition) {
            endOffsetCalls++;
            onEndOffset.run();
            return log.size();
        }
    }

    /**
     * Leases as the verifier grants them, confirmed as soon as taken (no previous owner to wait for); a test can lose the
     * newest one to a newer lease, and say which epoch the changelog has shown lately.
     */
    static final class TestLeases implements io.snowstamp.lease.Leases {
        private static final long TERM = Duration.ofHours(1).toNanos();
        long highestEpoch = -1;
        /** Per tag, the end of a segment another holder reserved after the next start's restore, before its lease record. */
        final Map<String, Long> reservedAfterRestore = new HashMap<>();
        /** Per tag, the end of another holder's write (its writer named) after the next start's restore, before its lease record. */
        final Map<String, Long> writtenAfterRestore = new HashMap<>();
        private io.snowstamp.lease.PartitionLease newest;
        private final io.snowstamp.lease.Ticker ticker;
        /** The lease records the holders wrote (out of any transaction), in order. */
        final List<PartitionCheckpoint> written = new ArrayList<>();

        TestLeases() {
            this(io.snowstamp.lease.Ticker.SYSTEM);
        }

        /** Leases whose checks, and the waits beside them, read {@code ticker}. */
        TestLeases(io.snowstamp.lease.Ticker ticker) {
            this.ticker = ticker;
        }

        @Override
        public io.snowstamp.lease.LeaseGuard take(org.apache.kafka.streams.processor.TaskId task,
                                                  org.apache.kafka.common.TopicPartition changelog, io.snowstamp.lease.LeaseMark mine,
                                                  byte[] key, byte[] value, String name, boolean restoreAgain) {
            io.snowstamp.lease.LeaseMark previous = newest == null ? null : newest.mine();
            written.add((PartitionCheckpoint) new SequenceStateSerde().deserialize(null, value));
            newest = new io.snowstamp.lease.PartitionLease(changelog.partition(), mine, io.snowstamp.lease.PartitionLease.NO_RESTORE_CHECK,
                    TERM, TERM);
            if (previous != null) {
                // the previous holder's last record (its marker, if it wrote one), the newest of the restore
                io.snowstamp.lease.LeaseRounds.observe(newest, 0, previous, -1);
            }
            reservedAfterRestore.forEach((tag, maxId) -> io.snowstamp.lease.LeaseRounds.observe(newest, 0, null, maxId, tag));
            writtenAfterRestore.forEach((tag, maxId) -> io.snowstamp.lease.LeaseRounds.observe(newest, 0, null, maxId, tag,
                    new io.snowstamp.lease.LeaseMark(1, "G").writer()));
            io.snowstamp.lease.LeaseRounds.observe(newest, 1, mine, -1);
            long now = ticker.nanoTime();
            io.snowstamp.lease.LeaseRounds.confirmed(newest, now, now);
            io.snowstamp.lease.LeaseRounds.confirmed(newest, now + TERM, now + TERM);     // the takeover wait is over
            return io.snowstamp.lease.LeaseGuard.of(newest, task, name, ticker);
        }

        @Override
        public long highestEpoch(org.apache.kafka.common.TopicPartition changelog) {
            return highestEpoch;
        }

        /** Another holder's write of {@code tag} ({@code writer}: {@link io.snowstamp.lease.LeaseMark#writer}) landed after this lease record. */
        void lateWrite(String tag, long maxId, long writer) {
            io.snowstamp.lease.LeaseRounds.observe(newest, 3, null, maxId, tag, writer);
        }

        /** Another task took a newer lease: the holder must not write any more (a task cut off while the group moved on). */
        void loseNewest() {
            io.snowstamp.lease.LeaseRounds.observe(newest, 2, new io.snowstamp.lease.LeaseMark(newest.mine().epoch() + 1, "other"), -1);
        }
    }

    // ---- set-up

    private SnowstampConfig config(String... pairs) {
        return drivers.base(Keys.ID_MODE, "sequence").with(pairs);
    }

    private void start(SnowstampConfig config) {
        start(config, 1);
    }

    private void start(SnowstampConfig config, int partitions) {
        start(config, partitions, config.recovery().tailGuard() ? tail : SequenceTail.disabled());
    }

    private void start(SnowstampConfig config, int partitions, SequenceTail withTail) {
        // a persistent store: the driver restores nothing from a changelog, only a store kept on disk survives a restart
        driver = drivers.start(SequenceTopology.build(config, partitions, clock::get, withTail, leases, segments, writeAcks),
                KafkaSettings.streams(config.connection(), config.topics()));
        input = driver.createInputTopic(config.topics().input(), new ByteArraySerializer(), new ByteArraySerializer());
        tags = driver.createInputTopic(config.sequence().tagsTopic(), new StringSerializer(), new TagDefinitionSerde());
        output = driver.createOutputTopic(config.topics().output(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        dlq = driver.createOutputTopic(config.topics().dlq(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        changelog = driver.createOutputTopic(SequenceNames.changelogTopic(config.connection().applicationId()), new StringDeserializer(),
                new SequenceStateSerde());
        definitions.forEach(entry -> tags.pipeInput(entry.getKey(), entry.getValue()));
    }

    /** A clean restart: everything forwarded is in the output partition. */
    private void restart(SnowstampConfig config) {
        readOutput();
        drivers.stop(driver);
        start(config);
    }

    /** A clean stop (everything forwarded is in the output partition); returns what the task's close wrote to the changelog. */
    private List<TestRecord<String, SequenceState>> stopReadingTheClose() {
        changelog.readRecordsToList();
        readOutput();
        drivers.stop(driver);
        return changelog.readRecordsToList();
    }

    /** A restart after a crash in which the records not read yet never reached the output partition (at-least-once). */
    private List<Long> restartLosingUnread(SnowstampConfig config) {
        List<Long> lost = output.readRecordsToList().stream().map(SequenceTopologyTest::number).toList();
        drivers.stop(driver);
        start(config);
        return lost;
    }

    /** Loses the local state: the next start has neither the store nor its changelog (a new application id). */
    private void wipeState(SnowstampConfig config) throws IOException {
        readOutput();
        drivers.stop(driver);
        drivers.wipe(config.connection().applicationId());
    }

    private void create(String tag, long start, long step) {
        define(tag, new TagDefinition(start, step, 1, T0));
    }

    /** A record of the tags topic; null removes the tag. */
    private void define(String tag, TagDefinition definition) {
        definitions.add(new java.util.AbstractMap.SimpleEntry<>(tag, definition));
        tags.pipeInput(tag, definition);
    }

    private static long number(TestRecord<byte[], byte[]> record) {
        return Long.parseLong(header(record, IdHeader.ID));
    }

    /** The records the driver wrote to the output topic since the last read; they are in the output partition the tail reads now. */
    private List<TestRecord<byte[], byte[]>> readOutput() {
        List<TestRecord<byte[], byte[]>> records = output.readRecordsToList();
        records.forEach(record -> tail.append(header(record, IdHeader.TAG), number(record)));
        return records;
    }

    /** Pipes {@code count} records keyed by {@code tag} and returns their numbers. */
    private List<Long> pipe(String tag, int count) {
        pipeUnread(tag, count);
        return readOutput().stream().map(SequenceTopologyTest::number).toList();
    }

    /** Pipes {@code count} records keyed by {@code tag} without reading the output: still in the producer, as it were. */
    private void pipeUnread(String tag, int count) {
        for (int i = 0; i < count; i++) {
            input.pipeInput(bytes(tag), bytes("{\"n\":" + i + "}"));
        }
    }

    private static List<Long> range(long first, long last) {
        List<Long> numbers = new ArrayList<>();
        for (long n = first; n <= last; n++) {
            numbers.add(n);
        }
        return numbers;
    }

    /** Moves the wall clock (and the driver's) on: the checkpoint punctuator runs every sequence.checkpoint-interval. */
    private void advance(int seconds) {
        clock.addAndGet(seconds * 1_000L);
        driver.advanceWallClockTime(Duration.ofSeconds(seconds));
    }

    private SequenceState stored(String key) {
        KeyValueStore<String, SequenceState> store = driver.getKeyValueStore(SequenceNames.STORE);
        return store.get(key);
    }

    /** The tag's segment, its writer's epoch left out (0): most tests compare the numbers only ({@link #writerOf}). */
    private TagSegment segment(String tag) {
        TagSegment segment = (TagSegment) stored(tag);
        return segment == null ? null : segment.writtenUnder(0);
    }

    /** The lease epoch of the holder that wrote the tag's segment last. */
    private long writerOf(String tag) {
        return ((TagSegment) stored(tag)).writer() >>> 32;
    }

    private List<TagSegment> segmentWrites(String tag) {
        List<TagSegment> writes = new ArrayList<>();
        for (var record : changelog.readRecordsToList()) {
            if (record.key().equals(tag)) {
                writes.add(((TagSegment) record.value()).writtenUnder(0));
            }
        }
        return writes;
    }

    // ---- numbering

    @Test
    void shouldNumberEachTagFromItsStartWithTagAndNumberHeaders() {
        start(config());
        create("order", 1001, 10);
        create("invoice", 1, 5);

        input.pipeInput(bytes("order"), bytes("a"));
        input.pipeInput(bytes("invoice"), bytes("b"));
        input.pipeInput(bytes("order"), bytes("c"));
        input.pipeInput(bytes("invoice"), bytes("d"));

        List<TestRecord<byte[], byte[]>> out = readOutput();
        assertThat(out).extracting(r -> header(r, IdHeader.TAG)).containsExactly("order", "invoice", "order", "invoice");
        assertThat(out).extracting(SequenceTopologyTest::number).containsExactly(1001L, 1L, 1002L, 2L);
        assertThat(out).extracting(r -> new String(r.value(), UTF_8)).containsExactly("a", "b", "c", "d");
        assertThat(out).extracting(r -> header(r, IdHeader.SOURCE))
                .containsExactly("events.raw/0/0", "events.raw/0/1", "events.raw/0/2", "events.raw/0/3");
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void shouldPassKeyValueTimestampAndHeadersThroughAndAddTagThenNumberLast() {
        start(config());
        create("order", 1, 10);
        Instant timestamp = Instant.parse("2001-02-03T04:05:06.789Z");

        input.pipeInput(new TestRecord<>(bytes("order"), new byte[] {(byte) 0xc3, 0x28, 0},
                new RecordHeaders().add("trace", bytes("abc")).add(IdHeader.ID, bytes("77")), timestamp));

        TestRecord<byte[], byte[]> out = readOutput().get(0);
        assertThat(out.key()).isEqualTo(bytes("order"));
        assertThat(out.value()).containsExactly((byte) 0xc3, 0x28, 0);
        assertThat(out.getRecordTime()).isEqualTo(timestamp);
        assertThat(out.headers().toArray()).extracting(Header::key)
                .containsExactly("trace", IdHeader.ID, IdHeader.SOURCE, IdHeader.TAG, IdHeader.ID);
        assertThat(number(out)).as("readers take the last snowstamp-id").isEqualTo(1);
    }

    @Test
    void shouldReserveEachNextSegmentWhenHalfOfTheCurrentOneIsUsed() {
        start(config());
        create("order", 1001, 10);

        assertThat(pipe("order", 25)).isEqualTo(range(1001, 1025));

        assertThat(segmentWrites("order")).extracting(TagSegment::segmentStart, TagSegment::maxId, TagSegment::issued)
                .containsExactly(tuple(1001L, 1010L, 1000L),
                        tuple(1011L, 1020L, 1006L),
                        tuple(1021L, 1030L, 1016L));
        assertThat(segment("order")).isEqualTo(new TagSegment(1030, 1016, 1021, 10, 1, T0));
    }

    @Test
    void shouldReserveTheFirstSegmentWithTheFirstRecordAndTheNextOneAtHalfUse() {
        start(config());
        create("order", 1001, 10);
        assertThat(stored("order")).isNull();

        assertThat(pipe("order", 5)).isEqualTo(range(1001, 1005));
        assertThat(segmentWrites("order")).extracting(TagSegment::maxId).containsExactly(1010L);

        assertThat(pipe("order", 1)).containsExactly(1006L);
        assertThat(segmentWrites("order")).extracting(TagSegment::maxId).containsExactly(1020L);
    }

    // ---- restarts: where a tag resumes

    /** Starts with {@code order} (start 1001, step 10) numbered 1001..1003. */
    private SnowstampConfig startWithOrderAt1003(String... pairs) {
        SnowstampConfig config = config(pairs);
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);
        return config;
    }

    @Test
    void shouldContinueWithoutAGapAfterACleanRestart() {
        SnowstampConfig config = startWithOrderAt1003();

        restart(config);

        assertThat(tail.scannedFrom).as("the records since the first start's checkpoint").containsExactly(-1L, 0L);
        assertThat(segment("order")).as("the tail's highest, recorded before the checkpoint moved past it")
                .isEqualTo(new TagSegment(1010, 1003, 1001, 10, 1, T0));
        assertThat(pipe("order", 9)).as("inside the reserved segment, then the next one").isEqualTo(range(1004, 1012));
        assertThat(segmentWrites("order")).extracting(TagSegment::segmentStart, TagSegment::maxId, TagSegment::issued)
                .as("the next segment reserved when half of the restored one is used").containsExactly(tuple(1011L, 1020L, 1006L));
    }

    @Test
    void shouldContinueWithoutAGapAfterRestartsInARow() {
        SnowstampConfig config = startWithOrderAt1003();

        restart(config);
        restart(config);                        // the scan starts after 1003 now: the store must know it

        assertThat(tail.scannedFrom).containsExactly(-1L, 0L, 3L);
        assertThat(pipe("order", 1)).containsExactly(1004L);
    }

    // ---- the resume rule: inside the segment only where nothing the previous holder issued can still show up

    @Test
    void shouldContinueWithoutAGapAfterACleanCloseUnderAtLeastOnce() {
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        List<TestRecord<String, SequenceState>> close = stopReadingTheClose();

        start(config);

        assertThat(close).extracting(TestRecord::key).as("the close: issued of the tag that advanced, then the marker")
                .containsExactly("order", SequenceState.CHECKPOINT_KEY);
        assertThat(((TagSegment) close.get(0).value()).issued()).isEqualTo(1003);
        assertThat(((PartitionCheckpoint) close.get(1).value()).closed()).isTrue();
        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).closed()).as("cleared by the next lease").isFalse();
        assertThat(pipe("order", 2)).containsExactly(1004L, 1005L);
    }

    @Test
    void shouldWriteTheMarkerAlsoWhenTheTaskClosesBeforeItsFirstRecord() {
        SnowstampConfig config = config(Keys.PROCESSING_GUARANTEE, "at_least_once");
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);
        restart(config);

        assertThat(stopReadingTheClose()).as("no record context around close: Kafka Streams sets none there")
                .extracting(record -> record.value() instanceof PartitionCheckpoint c && c.closed()).endsWith(true);
        start(config);

        assertThat(pipe("order", 1)).containsExactly(1004L);
    }

    @Test
    void shouldResumeAfterEveryNumberTheMarkerRecordsWhetherOrNotItReachedTheOutput() {
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        pipeUnread("order", 2);                 // 1004, 1005: issued, still on their way when the next owner reads the tail

        assertThat(restartLosingUnread(config)).containsExactly(1004L, 1005L);

        assertThat(pipe("order", 1)).as("they may still land: never issued again").containsExactly(1006L);
    }

    @Test
    void shouldLetNoNumberOfANewSegmentLeaveBeforeTheChangelogAcknowledgedIt() {
        io.snowstamp.testing.AnsweringTicker ticker = new io.snowstamp.testing.AnsweringTicker(System.nanoTime());
        leases = new TestLeases(ticker);
        // the changelog's own acknowledgements, which TopologyTestDriver never gives: a broker that does not answer
        writeAcks = WriteAcks.of(SequenceNames.changelogTopic(config().connection().applicationId()));
        start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_AUTO_CREATE, "true"));
        long before = ticker.nanoTime();

        Throwable thrown = catchThrowable(() -> pipeUnread("order", 1));

        assertThat(thrown).as("the number is dropped and the task gives its partition back")
                .isInstanceOf(org.apache.kafka.streams.errors.TaskMigratedException.class);
        assertThat(ticker.nanoTime() - before).as("after the bounded wait").isGreaterThanOrEqualTo(io.snowstamp.ownership.AckWait.MAX_WAIT_NANOS);
        assertThat(stored("order")).as("the segment was written").isNotNull();
        assertThat(output.isEmpty()).as("no number of it left the task").isTrue();
    }

    @Test
    void shouldResumeAboveTheReservedSegmentWithoutACleanCloseUnderAtLeastOnce() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        granted.loseNewest();
        assertThat(stopReadingTheClose()).as("a holder that lost its lease writes nothing").isEmpty();

        start(config);

        assertThat(pipe("order", 1)).as("1004..1010 may still be on their way from the old holder: skipped").containsExactly(1011L);
    }

    @Test
    void shouldResumeAboveASegmentThePreviousHolderReservedAfterTheRestoreUnderAtLeastOnce() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        granted.loseNewest();
        stopReadingTheClose();
        // the old holder went on (a pause, then its lease reader behind): it reserved 1011..1020 after the next holder's
        // restore read up to its end, a round of its own read past that reservation before the next lease record landed,
        // and it numbered up to 1013; those records are still on their way (the output partition's leader unreachable)
        granted.reservedAfterRestore.put("order", 1020L);

        start(config);

        assertThat(pipe("order", 3)).as("1011..1020 may still land from the old holder: skipped")
                .containsExactly(1021L, 1022L, 1023L);
    }

    @Test
    void shouldLetAMarkerWrittenBeforeTheFirstNumberVouchForNoNumberOfASegmentReservedAfterTheRestore() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        granted.loseNewest();
        stopReadingTheClose();
        // the old holder reserved 1011..1020 after the next holder's restore and numbered in it; its records are on their way
        granted.reservedAfterRestore.put("order", 1020L);
        start(config);
        granted.reservedAfterRestore.clear();
        // that holder resumed above 1001..1010 and closes cleanly before its first record: its marker is trusted next
        assertThat(stopReadingTheClose()).extracting(record -> record.value() instanceof PartitionCheckpoint c && c.closed())
                .endsWith(true);

        start(config);

        assertThat(pipe("order", 1)).as("the marker vouches for 1011..1020, which the old holder may still send")
                .containsExactly(1021L);
    }

    @Test
    void shouldContinueWithoutAGapAfterACleanCloseWhenTheLeaseReaderReadAWriteOfAKnownSegment() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        stopReadingTheClose();
        // a write of the segment the store holds, after the restore's end: this task's own raise by the tail, say
        granted.reservedAfterRestore.put("order", 1010L);

        start(config);

        assertThat(pipe("order", 2)).containsExactly(1004L, 1005L);
    }

    @Test
    void shouldLetAMarkerVouchForNoNumberAnUncleanPredecessorMayStillSendForATagItsWriterNeverNumbered() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        pipeUnread("order", 2);                 // 1004, 1005: the old holder's, still on their way
        granted.loseNewest();
        assertThat(restartLosingUnread(config)).as("no marker: the lease was lost").containsExactly(1004L, 1005L);
        // the holder after it resumed above the segment, and closes cleanly before its first record
        assertThat(stopReadingTheClose()).extracting(record -> record.value() instanceof PartitionCheckpoint c && c.closed())
                .endsWith(true);

        start(config);

        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).epoch()).as("right above the marker's")
                .isEqualTo(3);
        assertThat(pipe("order", 1)).as("the marker carries the resume above 1001..1010 its writer made").containsExactly(1011L);
    }

    @Test
    void shouldLetAMarkerVouchForNoNumberAnUncleanPredecessorMayStillSendWhenItsWriterNumberedOtherTags() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        create("refund", 1, 10);
        assertThat(pipe("refund", 1)).containsExactly(1L);
        pipeUnread("order", 2);
        granted.loseNewest();
        restartLosingUnread(config);
        assertThat(pipe("refund", 1)).as("above the skipped segment of refund").containsExactly(11L);
        stopReadingTheClose();

        start(config);

        assertThat(pipe("refund", 1)).containsExactly(12L);
        assertThat(pipe("order", 1)).containsExactly(1011L);
    }

    @Test
    void shouldIgnoreACleanCloseMarkerWhenANewerLeaseWasTakenSince() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        assertThat(stopReadingTheClose()).extracting(record -> record.value() instanceof PartitionCheckpoint c && c.closed())
                .containsExactly(false, true);
        granted.highestEpoch = 2;               // a lease of epoch 2 was read after the marker of epoch 1: its holder may have issued

        start(config);

        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).epoch()).isEqualTo(3);
        assertThat(pipe("order", 1)).containsExactly(1011L);
    }

    @Test
    void shouldContinueInsideTheSegmentUnderExactlyOnceAfterALostLease() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003();
        granted.loseNewest();
        assertThat(stopReadingTheClose()).as("no marker under exactly-once: a write after the last commit would open a transaction")
                .isEmpty();

        start(config);

        assertThat(pipe("order", 1)).as("what the old holder still sends aborts").containsExactly(1004L);
    }

    @Test
    void shouldResumeAboveTheReservedSegmentUnderExactlyOnceAfterAnAtLeastOnceHolderThatLostItsLease() {
        // a switch of processing.guarantee, one instance at a time: the old holder's records are not transactional, and
        // what it still sends lands visible to every reader
        TestLeases granted = new TestLeases();
        leases = granted;
        startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).exactlyOnce()).isFalse();
        granted.loseNewest();
        stopReadingTheClose();

        SnowstampConfig exactlyOnce = config();
        start(exactlyOnce);
        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).exactlyOnce())
                .as("not yet known to cover the at-least-once holder's numbers").isFalse();

        assertThat(pipe("order", 1)).as("1004..1010 may still be on their way from the at-least-once holder").containsExactly(1011L);
        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).exactlyOnce())
                .as("after its first number the tags lie above every earlier holder's segments").isTrue();
        granted.loseNewest();
        stopReadingTheClose();
        start(exactlyOnce);
        assertThat(pipe("order", 1)).as("after an exactly-once holder: what it still sends aborts").containsExactly(1012L);
    }

    @Test
    void shouldContinueInsideTheSegmentUnderExactlyOnceAfterACleanCloseOfAnAtLeastOnceHolder() {
        startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        assertThat(stopReadingTheClose()).as("the clean-close marker").isNotEmpty();

        start(config());

        assertThat(pipe("order", 1)).as("the marker records every number issued").containsExactly(1004L);
    }

    /**
     * The marker corner: G closes cleanly (marker of epoch 1); H trusts it and numbers 1004..1008 inside G's segment, its
     * checkpoint covering them, and closes cleanly (its write of every tag, then its marker of epoch 2). G's close wrote
     * "order issued 1003" too, and that write lands late, between H's write of the tag and H's marker: restored as the
     * tag's newest value, ahead of the marker, where no position check sees it, with the same segment (no raise).
     */
    @Test
    void shouldTrustNoMarkerWhenATagWasWrittenLastUnderAnotherEpoch() {
        SnowstampConfig config = config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);
        TagSegment gAtClose = new TagSegment(1010, 1003, 1001, 10, 1, T0, new io.snowstamp.lease.LeaseMark(1, "G").writer());
        restart(config);
        assertThat(pipe("order", 5)).as("inside G's segment, after its marker").containsExactly(1004L, 1005L, 1006L, 1007L, 1008L);
        advance(10);
        assertThat(writerOf("order")).isEqualTo(2);
        assertThat(stopReadingTheClose()).extracting(record -> record.value() instanceof PartitionCheckpoint c && c.closed())
                .endsWith(true);
        segments.landLate("order", gAtClose);

        start(config);

        assertThat(pipe("order", 1)).as("1004..1008 are H's: above the segment, not after G's late 1003").containsExactly(1011L);
    }

    /**
     * The seventh review: the output topic deleted and created again while the holder numbers (exactly-once), its producer
     * writing on into the new topic; the new end passes the old covered offset, then a crash. The checkpoint taken while
     * the new end lay below the old covered offset moves it down (with every tag's issued): the next start reads the new
     * topic's records after it, and the numbers before it are known as issued.
     */
    @Test
    void shouldMoveTheCheckpointDownWhenTheOutputWasCreatedAgainWhileTheHolderRan() {
        SnowstampConfig config = config(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        start(config);
        create("order", 1001, 100);
        create("refund", 1, 100);
        assertThat(pipe("order", 5)).containsExactly(1001L, 1002L, 1003L, 1004L, 1005L);      // offsets 0..4
        advance(10);                                                                          // covered 5
        tail.log.clear();                                                                     // the topic created again
        assertThat(pipe("order", 3)).containsExactly(1006L, 1007L, 1008L);                    // new offsets 0..2
        advance(10);                                                                          // end 3, below 5
        assertThat(pipe("refund", 3)).containsExactly(1L, 2L, 3L);                            // new offsets 3..5
        drivers.stop(driver);                                                                 // a crash

        start(config);

        assertThat(tail.scannedFrom).as("the new topic's records from the checkpoint moved down").endsWith(3L);
        assertThat(pipe("order", 1)).as("1006..1008 were committed and consumed").containsExactly(1009L);
    }

    /**
     * The compaction corner: an older holder's write of a tag, sent before it saw this lease, lands after this task's
     * lease record, below this task's segment; left the newest, compaction drops this task's record. The task writes the
     * tag again: at its next record, and (a quiet partition) within a second, not at its next checkpoint (the seventh
     * review: an idle holder crashing in between left the late write the newest, for compaction to keep).
     */
    @Test
    void shouldWriteATagAgainWhenAnotherHoldersLateWriteOfItLandedAfterThisLease() {
        TestLeases granted = new TestLeases();
        leases = granted;
        startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        create("refund", 1, 10);
        assertThat(pipe("refund", 1)).containsExactly(1L);
        changelog.readRecordsToList();

        granted.lateWrite("order", 1000, 0);
        assertThat(pipe("refund", 1)).containsExactly(2L);
        assertThat(changelog.readRecordsToList()).as("order written again under this lease, before the record")
                .extracting(record -> record.key(), record -> ((TagSegment) record.value()).writer() >>> 32)
                .containsExactly(tuple("order", 1L));
        assertThat(segment("order")).as("its numbers as they were").isEqualTo(new TagSegment(1010, 1003, 1001, 10, 1, T0));

        granted.lateWrite("refund", 5, 0);
        advance(1);
        assertThat(changelog.readRecordsToList()).extracting(record -> record.key())
                .as("a quiet partition: within a second, 9 s before the checkpoint").containsExactly("refund");
        assertThat(segment("refund").issued()).isEqualTo(2);
    }

    /**
     * Review finding A: during a switch to at-least-once, A (at-least-once) and E1 (exactly-once, losing the same
     * rebalance) both restore E0's exactly-once state and take epoch 2; A wins, numbers 1011..1015 (1014, 1015 still on
     * their way) and crashes; E1's lease record (written outside any transaction, flagged exactly-once after E0) lands last
     * and is the newest checkpoint. The next exactly-once holder must not resume inside: A's tag record, of E1's epoch by
     * another holder, shows the rival.
     */
    @Test
    void shouldNotTrustAnExactlyOnceLeaseRecordWhenARivalOfItsEpochWroteATag() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig exactlyOnce = startWithOrderAt1003();
        stopReadingTheClose();
        start(config(Keys.PROCESSING_GUARANTEE, "at_least_once"));          // A, epoch 2
        PartitionCheckpoint aLease = (PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY);
        assertThat(pipe("order", 3)).containsExactly(1011L, 1012L, 1013L);
        pipeUnread("order", 2);                             // 1014, 1015: on their way
        granted.loseNewest();
        drivers.stop(driver);                               // A crashes
        segments.landLate(SequenceState.CHECKPOINT_KEY,
                new PartitionCheckpoint(aLease.partitions(), aLease.coveredOffset(), 2, "e1#00000000/t", T0, T0, false, true));

        start(exactlyOnce);

        assertThat(pipe("order", 1)).as("above A's segment 1011..1020, whose 1014 and 1015 still land").containsExactly(1021L);
    }

    /**
     * An exactly-once holder killed before its first commit leaves its lease record as the newest checkpoint (its other
     * writes aborted): the next exactly-once holder still resumes right after the last number, no gap.
     */
    @Test
    void shouldContinueWithoutAGapAfterAnExactlyOnceHolderKilledBeforeItsFirstCommit() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig exactlyOnce = startWithOrderAt1003();
        stopReadingTheClose();
        start(exactlyOnce);                                 // E1: its lease record written, nothing committed
        PartitionCheckpoint e1Lease = granted.written.get(granted.written.size() - 1);
        assertThat(e1Lease.exactlyOnce()).as("after an exactly-once holder").isTrue();
        granted.loseNewest();
        drivers.stop(driver);
        segments.landLate(SequenceState.CHECKPOINT_KEY, e1Lease);

        start(exactlyOnce);

        assertThat(pipe("order", 1)).containsExactly(1004L);
    }

    /**
     * Review finding C: a holder L that took the same epoch as H (both restored the same state; L loses at its first
     * check) writes "order resumed above 1010" at its start; the write lands after H's lease record. H's lease reader
     * must see another writer there (the holder, not only the epoch, tells writers apart) and write the tag again, or
     * once compaction keeps L's write only, a crash of H lets the next owner repeat H's 1011..1013.
     */
    @Test
    void shouldTellAHolderOfTheSameEpochFromThisOneAndWriteTheTagAgain() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        create("refund", 1, 10);
        granted.loseNewest();
        stopReadingTheClose();
        start(config);                                      // H, epoch 2
        assertThat(pipe("order", 3)).containsExactly(1011L, 1012L, 1013L);
        changelog.readRecordsToList();

        granted.lateWrite("order", 1010, new io.snowstamp.lease.LeaseMark(2, "loser#00000000/t").writer());
        assertThat(pipe("refund", 1)).containsExactly(1L);

        assertThat(changelog.readRecordsToList()).extracting(record -> record.key()).as("order written again by H").contains("order");
        assertThat(writerOf("order")).isEqualTo(2);
    }

    /**
     * Review finding D: a holder H that never issued (no input) freezes; N takes the partition over and numbers 1011..1015;
     * H wakes. Its periodic checkpoint (covering the output past N's numbers) and its clean-close marker would become the
     * newest records, and the next owner, trusting the marker, would scan the output only after N's numbers. Past its term
     * without a confirmation H writes neither, issued or not.
     */
    @Test
    void shouldWriteNoCheckpointNorMarkerFromAHolderThatNeverIssuedAndOutlivedItsTerm() {
        io.snowstamp.testing.AnsweringTicker ticker = new io.snowstamp.testing.AnsweringTicker(System.nanoTime());
        TestLeases granted = new TestLeases(ticker);
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        granted.loseNewest();
        stopReadingTheClose();
        start(config);                                      // H, epoch 2, never a record
        advance(1);                                         // its start's writes committed
        changelog.readRecordsToList();
        ticker.park(Duration.ofHours(3).toNanos());         // H frozen past its term; N numbers meanwhile
        for (long n = 1011; n <= 1015; n++) {
            tail.append("order", n);
        }

        advance(10);                                        // H wakes: its periodic checkpoint is due

        assertThat(changelog.readRecordsToList()).as("no checkpoint from H").isEmpty();
        assertThat(stopReadingTheClose()).as("no marker from H").isEmpty();
        start(config);
        assertThat(pipe("order", 1)).as("above N's 1011..1015").containsExactly(1016L);
    }

    /**
     * G (epoch 1) numbers 1001..1003 in 1001..1010 and sends "order issued 1003", then freezes; H (epoch 2) resumes above
     * 1010, numbers 1011..1013, checkpoints them and closes cleanly. Returns G's frozen write.
     */
    private TagSegment gThenH(TestLeases granted, SnowstampConfig config) {
        create("refund", 1, 10);
        TagSegment gLate = new TagSegment(1010, 1003, 1001, 10, 1, T0, new io.snowstamp.lease.LeaseMark(1, "G").writer());
        granted.loseNewest();
        stopReadingTheClose();
        start(config);
        assertThat(pipe("order", 3)).as("H, above G's segment").containsExactly(1011L, 1012L, 1013L);
        advance(10);
        assertThat(stopReadingTheClose()).extracting(r -> r.value() instanceof PartitionCheckpoint c && c.closed()).endsWith(true);
        return gLate;
    }

    /**
     * Review finding B1: G's late write lands after J's restore ended, before J's lease record (no raise: it is lower than
     * J's store). J numbers only refund, then is cut off; compaction keeps G's write as order's only record. J writes
     * order again, so the next owner K does not resume above G's 1010 and repeat H's 1011..1013.
     */
    @Test
    void shouldWriteATagAgainWhenALowerLateWriteLandedBetweenTheRestoreAndTheLeaseRecord() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        TagSegment gLate = gThenH(granted, config);
        granted.writtenAfterRestore.put("order", 1010L);
        start(config);                                      // J trusts H's marker
        granted.writtenAfterRestore.clear();
        changelog.readRecordsToList();
        assertThat(pipe("refund", 2)).containsExactly(1L, 2L);
        boolean rewritten = changelog.readRecordsToList().stream().anyMatch(record -> record.key().equals("order"));
        advance(10);
        granted.loseNewest();                               // J cut off: no marker
        stopReadingTheClose();
        if (!rewritten) {
            segments.landLate("order", gLate);              // compaction: G's late write is order's newest, only record
        }

        start(config);

        assertThat(pipe("order", 1)).as("above H's segment 1011..1020 (J ended unclean), not above G's 1010").containsExactly(1021L);
    }

    /**
     * Review finding B2: G's late write lands after H's marker and compaction removes H's records of order before J
     * starts. J distrusts the marker, but G's segment (1001..1010) is all the state says of order: J reads the whole
     * output, where H's 1011..1013 are, instead of the part after the marker's covered offset.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "late writer named: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void shouldReadTheWholeOutputWhenALateWriteBehindTheMarkerMayHaveReplacedItsHoldersValue(boolean named) {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        TagSegment gLate = gThenH(granted, config);
        // not named: G ran a build before tag records named their writer (writer 0), behind H's marker, which names them
        segments.landLate("order", named ? gLate : gLate.writtenUnder(0));

        start(config);

        assertThat(tail.scannedFrom).as("the whole output").endsWith(-1L);
        assertThat(pipe("order", 1)).as("H forwarded 1011..1013").containsExactly(1014L);
    }

    /**
     * Behind the marker of a build that named no writers (format version 3), every tag names none: no tag is known to be a
     * late write, and the start reads the output from the marker's checkpoint, not the whole of it (it resumes above the
     * segments: the marker is not trusted).
     */
    @Test
    void shouldReadFromTheCheckpointBehindTheMarkerOfABuildThatNamedNoWriters() {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        List<TestRecord<String, SequenceState>> close = stopReadingTheClose();
        PartitionCheckpoint marker = (PartitionCheckpoint) close.get(close.size() - 1).value();
        assertThat(marker.closed()).isTrue();
        // as that build wrote them: format version 3, no writer
        segments.landLate("order", java.nio.ByteBuffer.allocate(2 + 6 * 8).put((byte) 3).put((byte) 1)
                .putLong(1010).putLong(1003).putLong(1001).putLong(10).putLong(1).putLong(T0).array());
        byte[] holder = marker.holder().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        segments.landLate(SequenceState.CHECKPOINT_KEY, java.nio.ByteBuffer.allocate(2 + 4 + 8 + 8 + 2 + holder.length + 8 + 8 + 1)
                .put((byte) 3).put((byte) 2).putInt(marker.partitions()).putLong(marker.coveredOffset()).putLong(marker.epoch())
                .putShort((short) holder.length).put(holder).putLong(marker.acquiredAt()).putLong(marker.checkpointAt()).put((byte) 1)
                .array());

        start(config);

        assertThat(tail.scannedFrom).as("from the checkpoint").endsWith(marker.coveredOffset());
        assertThat(pipe("order", 1)).as("above the segment: the marker is not trusted").containsExactly(1011L);
    }

    /**
     * Review finding 3: a holder with no input never reaches a first number, whose raises lift a tag above a segment
     * another holder reserved before this lease record (here 1011..1020, behind an older holder's lower write that the
     * restore kept). Its checkpoint raises it instead — with or without the tail guard — so that the higher value is the
     * newest in the log before compaction can drop the reservation.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void shouldRaiseATagAboveASegmentReservedBeforeTheLeaseRecordAlsoWithoutInput(boolean tailGuard) {
        TestLeases granted = new TestLeases();
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s",
                Keys.RECOVERY_TAIL_GUARD, Boolean.toString(tailGuard));
        granted.loseNewest();
        stopReadingTheClose();
        granted.reservedAfterRestore.put("order", 1020L);
        start(config);                                      // no input
        granted.reservedAfterRestore.clear();

        advance(10);

        assertThat(segment("order").maxId()).as("raised at the checkpoint").isEqualTo(1020);
        assertThat(segment("order").issued()).isEqualTo(1020);
        assertThat(writerOf("order")).as("by this holder").isEqualTo(2);
    }

    /**
     * Review finding 5: the periodic checkpoint checks the lease, then reads the output's end, which can take long (a
     * broker that does not answer); past the term by then, a checkpoint written now could cover a new owner's numbers.
     */
    @Test
    void shouldWriteNoCheckpointWhenTheLeaseRanOutWhileTheOutputsEndWasRead() {
        io.snowstamp.testing.AnsweringTicker ticker = new io.snowstamp.testing.AnsweringTicker(System.nanoTime());
        TestLeases granted = new TestLeases(ticker);
        leases = granted;
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        granted.loseNewest();
        stopReadingTheClose();
        start(config);
        assertThat(pipe("order", 2)).containsExactly(1011L, 1012L);
        changelog.readRecordsToList();
        tail.onEndOffset = () -> ticker.park(Duration.ofHours(3).toNanos());

        advance(10);

        assertThat(tail.endOffsetCalls).as("the end was read").isPositive();
        assertThat(changelog.readRecordsToList()).as("nothing written after it").isEmpty();
    }

    /**
     * Review: P numbers 1001..1005 of order in 1001..1010 (1004 and 1005 still on their way) and loses its lease. H runs
     * without the tail guard (a setting rolled out one instance at a time) and resumes above the segments: that must be
     * recorded at its start (issued up to 1010) like any such resume, or H's clean close — H never numbers order — vouches
     * for issued 1003, and N, trusting it, issues 1004 again. Under exactly-once (H numbering another tag only) the same
     * record makes H's exactly-once mark true: "every earlier holder's segment below".
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "H exactly-once: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void shouldRecordTheResumeAboveTheSegmentsAlsoWithoutTheTailGuard(boolean exactlyOnce) {
        TestLeases granted = new TestLeases();
        leases = granted;
        startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once");
        create("refund", 1, 10);
        pipeUnread("order", 2);                             // 1004, 1005: P's, still on their way
        granted.loseNewest();
        assertThat(output.readRecordsToList()).hasSize(2);
        drivers.stop(driver);
        String guarantee = exactlyOnce ? "exactly_once_v2" : "at_least_once";
        start(config(Keys.PROCESSING_GUARANTEE, guarantee, Keys.RECOVERY_TAIL_GUARD, "false"));     // H
        if (exactlyOnce) {
            assertThat(pipe("refund", 1)).containsExactly(1L);
        }
        stopReadingTheClose();                              // at-least-once: H's clean-close marker

        start(config(Keys.PROCESSING_GUARANTEE, guarantee));                                          // N, tail guard on

        assertThat(pipe("order", 1)).as("1004 and 1005 may still land from P").containsExactly(1011L);
    }

    /**
     * Review: under exactly-once the numbers after the last periodic checkpoint are known only from the output. Where its
     * records after the checkpoint were deleted before the next start read them (output retention: records keep their
     * input's timestamp, so a backfill of old events goes at the next check; an application down longer than
     * retention.ms; deleteRecords), or the output ends below the checkpoint (the topic deleted and created again: offsets
     * from 0; fifth review), the start resumes above the segments instead of after the checkpoint's issued.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "output {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"trimmed by retention", "created again"})
    void shouldResumeAboveTheSegmentsWhenTheOutputsRecordsAfterTheCheckpointAreGone(String how) {
        SnowstampConfig config = startWithOrderAt1003(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        advance(10);                                        // checkpoint: covered offset 3, order issued 1003
        assertThat(pipe("order", 2)).containsExactly(1004L, 1005L);     // committed, consumed
        drivers.stop(driver);                               // a crash: under exactly-once nothing is written at the close
        if (how.equals("created again")) {
            tail.log.clear();                               // its end is 0, below 3
        } else {
            tail.logStart = tail.log.size();                // offsets 0..4 deleted
        }

        start(config);

        assertThat(pipe("order", 1)).as("1004 and 1005 were committed and consumed").containsExactly(1011L);
    }

    /**
     * Fifth review: the same after holders that never checkpointed (no tail guard: the covered offset stays -1, their
     * records from offset 0 on), the tail guard then switched on while retention deleted those records.
     */
    @Test
    void shouldResumeAboveTheSegmentsWhenTheOutputOfHoldersThatNeverCheckpointedWasDeleted() {
        start(config(Keys.RECOVERY_TAIL_GUARD, "false"));                     // exactly-once, as every holder so far
        create("order", 1001, 10);
        assertThat(pipe("order", 7)).as("1011..1020 reserved at 1006").isEqualTo(range(1001, 1007));
        drivers.stop(driver);                               // a crash: 1007 is in the output only
        tail.logStart = tail.log.size();                    // retention deleted offsets 0..6

        start(config());

        assertThat(pipe("order", 1)).as("1001..1007 were committed and consumed").containsExactly(1021L);
    }

    /** Behind an at-least-once clean-close marker its own issued counts: output records deleted since cost no gap. */
    @Test
    void shouldContinueWithoutAGapAfterACleanCloseWhoseOutputRecordsWereDeletedSince() {
        SnowstampConfig config = startWithOrderAt1003(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        readOutput();
        drivers.stop(driver);                               // a clean stop: the marker records issued 1003
        tail.logStart = tail.log.size();                    // retention deleted every record while the stamper was down

        start(config);

        assertThat(pipe("order", 1)).containsExactly(1004L);
    }

    @Test
    void shouldRecordTheLastNumberIssuedBeforeEachCheckpoint() {
        SnowstampConfig config = config(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        start(config);
        create("order", 1001, 10);
        create("idle", 1, 10);
        assertThat(pipe("idle", 2)).containsExactly(1L, 2L);
        advance(10);
        changelog.readRecordsToList();
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);

        advance(10);

        assertThat(changelog.readRecordsToList()).extracting(record -> record.key())
                .as("only the tag that advanced, then the checkpoint; one write per checkpoint")
                .containsExactly("order", "order", SequenceState.CHECKPOINT_KEY);
        assertThat(segment("order")).isEqualTo(new TagSegment(1010, 1003, 1001, 10, 1, T0 + 20_000));
        assertThat(((PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY)).coveredOffset()).isEqualTo(5);
    }

    @Test
    void shouldContinueAfterTheNumberTheCheckpointRecordedWhenTheTailAfterItIsEmpty() {
        SnowstampConfig config = startWithOrderAt1003(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        advance(10);

        restart(config);

        assertThat(tail.scannedFrom).containsExactly(-1L, 3L);
        assertThat(pipe("order", 1)).as("the scan sees nothing of order: the checkpoint's record of 1003 is what counts")
                .containsExactly(1004L);
    }

    @Test
    void shouldContinueRightAfterTheHighestNumberInTheTailAfterTheCheckpoint() {
        SnowstampConfig config = startWithOrderAt1003(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        advance(10);
        assertThat(pipe("order", 2)).containsExactly(1004L, 1005L);
        tail.append("order", 1006);             // a crash: 1006 was in the aborted transaction, visible to read_uncommitted

        restart(config);

        assertThat(tail.scannedFrom).containsExactly(-1L, 3L);
        assertThat(pipe("order", 2)).containsExactly(1007L, 1008L);
    }

    @Test
    void shouldNotGoBackWhenTheTailShowsLessThanTheCheckpointRecorded() {
        SnowstampConfig config = startWithOrderAt1003(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        advance(10);
        tail.append("order", 1002);             // not what snowstamp writes: the store's record wins

        restart(config);

        assertThat(pipe("order", 1)).containsExactly(1004L);
    }

    @Test
    void shouldReuseNumbersThatNeverReachedTheOutputAndSkipThoseRecordedAsIssued() {
        SnowstampConfig config = config(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s");
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 2)).containsExactly(1001L, 1002L);
        pipeUnread("order", 1);                 // 1003: forwarded before the checkpoint, not in the log yet
        advance(10);                            // records order issued=1003, covered offset 2
        pipeUnread("order", 2);                 // 1004, 1005: forwarded after it

        assertThat(restartLosingUnread(config)).as("an at-least-once crash: never sent").containsExactly(1003L, 1004L, 1005L);

        assertThat(pipe("order", 1)).as("1003 may have been sent before the checkpoint: skipped; 1004 and 1005 were not")
                .containsExactly(1004L);
    }

    @Test
    void shouldResumeAfterTheReservedSegmentWhenWhatWasIssuedIsUnknown() {
        SnowstampConfig config = startWithOrderAt1003();
        advance(30);                            // the checkpoint covers 1001..1003
        // the entry as an earlier build wrote it: format version 1, no issued
        driver.<String, SequenceState>getKeyValueStore(SequenceNames.STORE).put("order", new SequenceStateSerde().deserialize("c",
                java.util.HexFormat.of().parseHex("0101" + "00000000000003f2" + "00000000000003e9" + "000000000000000a"
                        + "0000000000000001" + "0000000000000000")));

        restart(config);

        assertThat(pipe("order", 1)).as("1004..1010 may have been issued: skipped").containsExactly(1011L);
    }

    @Test
    void shouldAbandonTheRestOfTheSegmentAtEveryStartWithoutTheTailGuard() {
        SnowstampConfig config = startWithOrderAt1003(Keys.RECOVERY_TAIL_GUARD, "false");

        restart(config);
        assertThat(pipe("order", 2)).as("1004..1010 were reserved and are skipped, never reissued").containsExactly(1011L, 1012L);
        restart(config);

        assertThat(pipe("order", 1)).containsExactly(1021L);
        assertThat(tail.scannedFrom).isEmpty();
    }

    @Test
    void shouldApplyAStepChangeAtTheNextSegmentBoundaryAfterARestart() {
        SnowstampConfig config = startWithOrderAt1003();
        restart(config);

        define("order", new TagDefinition(1001, 100, 2, T0 + 1));

        assertThat(pipe("order", 10)).isEqualTo(range(1004, 1013));
        assertThat(segment("order")).as("reserved at half use of the restored segment").isEqualTo(new TagSegment(1110, 1006, 1011, 100, 2, T0));
    }

    @Test
    void shouldApplyAStepChangeAtTheNextSegment() {
        start(config());
        create("order", 1001, 10);
        assertThat(pipe("order", 15)).isEqualTo(range(1001, 1015));

        define("order", new TagDefinition(1001, 100, 2, T0 + 1));

        assertThat(pipe("order", 10)).as("no gap: the current segment runs out first").isEqualTo(range(1016, 1025));
        assertThat(segmentWrites("order")).extracting(TagSegment::segmentStart, TagSegment::maxId, TagSegment::step, TagSegment::revision)
                .containsExactly(tuple(1001L, 1010L, 10L, 1L),
                        tuple(1011L, 1020L, 10L, 1L),
                        tuple(1021L, 1120L, 100L, 2L));
    }

    @Test
    void shouldKeepTagsIndependent() {
        start(config());
        create("a", 1, 2);
        create("b", 1, 3);
        for (int i = 0; i < 6; i++) {
            input.pipeInput(bytes(i % 2 == 0 ? "a" : "b"), bytes("x"));
        }
        List<TestRecord<byte[], byte[]>> out = readOutput();
        assertThat(out).extracting(SequenceTopologyTest::number).containsExactly(1L, 1L, 2L, 2L, 3L, 3L);
        assertThat(segment("a").maxId()).as("1..2, then 3..4 at the second number").isEqualTo(4);
        assertThat(segment("b").maxId()).as("1..3, then 4..6 at the second number").isEqualTo(6);
    }

    // ---- tags: unknown, auto-created, created again

    @Test
    void shouldSendAnUnknownTagToTheDeadLetterTopicUnchanged() {
        start(config());
        create("order", 1, 10);

        input.pipeInput(new TestRecord<>(bytes("nope"), bytes("{\"x\":1}"), new RecordHeaders().add("trace", bytes("t"))));
        input.pipeInput(bytes("order"), bytes("ok"));

        TestRecord<byte[], byte[]> dead = dlq.readRecord();
        assertThat(dlq.isEmpty()).isTrue();
        assertThat(dead.key()).isEqualTo(bytes("nope"));
        assertThat(dead.value()).isEqualTo(bytes("{\"x\":1}"));
        assertThat(header(dead, "trace")).isEqualTo("t");
        assertThat(header(dead, IdHeader.ERROR)).isEqualTo("unknown-tag");
        assertThat(header(dead, "__streams.errors.message")).contains("tag 'nope' is not registered");
        assertThat(header(dead, "__streams.errors.topic")).isEqualTo("events.raw");
        assertThat(header(dead, "__streams.errors.offset")).isEqualTo("0");
        assertThat(dead.headers().headers(IdHeader.SOURCE)).isEmpty();
        assertThat(readOutput()).extracting(SequenceTopologyTest::number).containsExactly(1L);
        assertThat(stored("nope")).isNull();
    }

    @Test
    void shouldAutoCreateAnUnknownTagWithTheDefaultsWhenConfigured() {
        start(config(Keys.SEQUENCE_AUTO_CREATE, "true", Keys.SEQUENCE_DEFAULT_START, "100", Keys.SEQUENCE_DEFAULT_STEP, "4"));

        assertThat(pipe("fresh", 5)).containsExactly(100L, 101L, 102L, 103L, 104L);

        assertThat(dlq.isEmpty()).isTrue();
        assertThat(segment("fresh")).isEqualTo(new TagSegment(107, 102, 104, 4, 0, T0));
    }

    @Test
    void shouldLetARegisteredDefinitionWinOverTheDefaultsOfAnAutoCreatedTag() {
        start(config(Keys.SEQUENCE_AUTO_CREATE, "true", Keys.SEQUENCE_DEFAULT_STEP, "4"));
        assertThat(pipe("t", 2)).containsExactly(1L, 2L);

        create("t", 1, 50);

        assertThat(pipe("t", 4)).as("the old segment runs out, the next one has the registered step").containsExactly(3L, 4L, 5L, 6L);
        assertThat(segment("t")).isEqualTo(new TagSegment(54, 3, 5, 50, 1, T0));
    }

    @Test
    void shouldNeverGoBackWhenATagIsCreatedAgainWithALowerStart() {
        SnowstampConfig config = startWithOrderAt1003();

        define("order", null);                       // deleted by hand
        define("order", new TagDefinition(1, 10, 1, T0));
        restart(config);

        assertThat(pipe("order", 8)).isEqualTo(range(1004, 1011));
    }

    @Test
    void shouldJumpForwardWhenATagIsCreatedAgainWithAHigherStart() {
        start(config());
        create("order", 1, 5);
        assertThat(pipe("order", 5)).isEqualTo(range(1, 5));

        define("order", new TagDefinition(9000, 5, 2, T0));

        assertThat(pipe("order", 7)).as("after the segment reserved ahead (6..10), at the next one")
                .containsExactly(6L, 7L, 8L, 9L, 10L, 9000L, 9001L);
    }

    // ---- bad records

    @Test
    void shouldSendRecordsWithoutAValidTagToTheDeadLetterTopicWithTheirCode() {
        start(config(Keys.SEQUENCE_AUTO_CREATE, "true"));

        input.pipeInput((byte[]) null, bytes("no key"));
        input.pipeInput(new byte[0], bytes("empty key"));
        input.pipeInput(new byte[] {(byte) 0xc3, 0x28}, bytes("not UTF-8"));
        input.pipeInput(bytes("tab\there"), bytes("control character"));
        input.pipeInput(bytes("x".repeat(201)), bytes("too long"));
        input.pipeInput(bytes("x".repeat(200)), bytes("longest tag"));

        assertThat(dlq.readRecordsToList()).extracting(r -> header(r, IdHeader.ERROR))
                .containsExactly("no-tag", "no-tag", "invalid-tag", "invalid-tag", "invalid-tag");
        assertThat(readOutput()).extracting(r -> new String(r.value(), UTF_8)).containsExactly("longest tag");
    }

    @Test
    void shouldTakeTheTagFromAJsonFieldAndSpliceTheNumberIn() {
        start(config(Keys.SEQUENCE_TAG_SOURCE, "field:kind", Keys.STAMP_JSON_FIELD, "no"));
        create("order", 7, 10);
        create("42", 1, 10);

        input.pipeInput(bytes("user-1"), bytes("{\"kind\":\"order\",\"x\":{\"kind\":\"nested\"}}"));
        input.pipeInput(bytes("user-2"), bytes("{\"kind\":42}"));

        List<TestRecord<byte[], byte[]>> out = readOutput();
        assertThat(out).extracting(r -> new String(r.value(), UTF_8))
                .containsExactly("{\"no\":7,\"kind\":\"order\",\"x\":{\"kind\":\"nested\"}}", "{\"no\":1,\"kind\":42}");
        assertThat(out).extracting(r -> new String(r.key(), UTF_8)).containsExactly("user-1", "user-2");
        assertThat(out).extracting(r -> header(r, IdHeader.TAG)).containsExactly("order", "42");
    }

    @Test
    void shouldRefuseRecordsWhoseTagFieldIsMissingOrNotText() {
        start(config(Keys.SEQUENCE_TAG_SOURCE, "field:kind", Keys.SEQUENCE_AUTO_CREATE, "true"));

        input.pipeInput(bytes("k"), bytes("{\"other\":1}"));
        input.pipeInput(bytes("k"), bytes("{\"kind\":null}"));
        input.pipeInput(bytes("k"), bytes("{\"kind\":{\"a\":1}}"));
        input.pipeInput(bytes("k"), bytes("{\"kind\":1.5}"));
        input.pipeInput(bytes("k"), bytes("[\"kind\"]"));
        input.pipeInput(bytes("k"), bytes("{\"kind\":\"a\""));
        input.pipeInput(bytes("k"), bytes("not json"));
        input.pipeInput(bytes("k"), bytes("{\"kind\":\"a\",\"kind\":\"b\"}"));
        input.pipeInput(bytes("k"), (byte[]) null);
        input.pipeInput(bytes("k"), bytes("{\"kind\":\"\"}"));

        assertThat(dlq.readRecordsToList()).extracting(r -> header(r, IdHeader.ERROR))
                .containsExactly("no-tag", "no-tag", "invalid-tag", "invalid-tag", "not-object", "truncated", "not-json",
                        "duplicate-key", "not-object", "invalid-tag");
        assertThat(output.isEmpty()).isTrue();
    }

    @Test
    void shouldRefuseJsonTheSpliceWouldRefuseBeforeRouting() {
        start(config(Keys.STAMP_JSON_FIELD, "no"));
        create("order", 1, 10);

        input.pipeInput(bytes("order"), bytes("{\"no\":5}"));
        input.pipeInput(bytes("order"), bytes("[1]"));
        input.pipeInput(bytes("order"), bytes("{\"a\":1}"));

        List<TestRecord<byte[], byte[]>> dead = dlq.readRecordsToList();
        assertThat(dead).extracting(r -> header(r, IdHeader.ERROR)).containsExactly("field-exists", "not-object");
        assertThat(dead).extracting(r -> header(r, "__streams.errors.topic")).containsOnly("events.raw");
        assertThat(readOutput()).extracting(r -> new String(r.value(), UTF_8)).containsExactly("{\"no\":1,\"a\":1}");
    }

    // ---- the tail and the checkpoint

    @Test
    void shouldResumeAboveTheTailWhenTheStateIsLost() throws IOException {
        SnowstampConfig config = startWithOrderAt1003();
        wipeState(config);
        tail.append("gone", 77);

        start(config);

        assertThat(tail.scannedFrom).as("no checkpoint survived: read the whole partition").containsExactly(-1L, -1L);
        assertThat(segment("gone")).isEqualTo(TagSegment.fromTail(77, T0));
        assertThat(pipe("order", 1)).containsExactly(1004L);
    }

    @Test
    void shouldRaiseAStoredTagThatTheTailShowsHigher() {
        SnowstampConfig config = config();
        start(config);
        create("order", 1, 10);
        assertThat(pipe("order", 1)).containsExactly(1L);
        tail.append("order", 25);               // e.g. at-least-once: records out, state write lost

        restart(config);

        assertThat(segment("order")).isEqualTo(new TagSegment(25, 25, -1, 0, 1, T0));
        assertThat(pipe("order", 1)).containsExactly(26L);
    }

    @Test
    void shouldScanFromTheCheckpointTheRestoredStateCovers() {
        SnowstampConfig config = config();
        tail.pad(7);
        start(config);
        assertThat(stored(SequenceState.CHECKPOINT_KEY)).isEqualTo(new PartitionCheckpoint(1, 7, 1, io.snowstamp.lease.Holders.of(INSTANCE), T0, T0,
                false, true));

        tail.pad(5);
        restart(config);

        assertThat(tail.scannedFrom).containsExactly(-1L, 7L);
        PartitionCheckpoint checkpoint = (PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY);
        assertThat(checkpoint.coveredOffset()).isEqualTo(12);
        assertThat(checkpoint.epoch()).isEqualTo(2);
    }

    @Test
    void shouldMoveTheCheckpointForwardEveryInterval() {
        start(config(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s"));
        tail.pad(40);

        advance(10);

        assertThat(tail.endOffsetCalls).isEqualTo(1);
        PartitionCheckpoint checkpoint = (PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY);
        assertThat(checkpoint.coveredOffset()).isEqualTo(40);
        assertThat(checkpoint.checkpointAt()).isEqualTo(T0 + 10_000);
    }

    @Test
    void shouldNotReadTheTailWhenTheTailGuardIsOff() {
        start(config(Keys.RECOVERY_TAIL_GUARD, "true"));
        drivers.stop(driver);
        SnowstampConfig off = config(Keys.RECOVERY_TAIL_GUARD, "false");
        driver = drivers.start(SequenceTopology.build(off, 1, clock::get, SequenceTail.disabled(), io.snowstamp.lease.Leases.none(),
                org.apache.kafka.streams.state.Stores.persistentKeyValueStore(SequenceNames.STORE), WriteAcks.immediate()),
                KafkaSettings.streams(off.connection(), off.topics()));

        PartitionCheckpoint checkpoint = (PartitionCheckpoint) driver.<String, SequenceState>getKeyValueStore(SequenceNames.STORE)
                .get(SequenceState.CHECKPOINT_KEY);
        assertThat(checkpoint.coveredOffset()).as("kept, not advanced").isEqualTo(0);
        assertThat(checkpoint.epoch()).isEqualTo(2);
    }

    @Test
    void shouldRefuseToStartWhenTheOutputPartitionCountChanged() {
        SnowstampConfig config = config();
        start(config, 1);
        drivers.stop(driver);

        Throwable thrown = catchThrowable(() -> start(config, 3));

        assertThat(thrown).hasRootCauseInstanceOf(PartitionsChangedException.class)
                .rootCause().hasMessageContaining("written for 1 output partitions, the output topic now has 3");
    }

    @Test
    void shouldStopRatherThanWrapPastTheLargestNumber() {
        start(config());
        create("order", 1, 10);
        drivers.stop(driver);
        tail.append("order", Long.MAX_VALUE - 2);
        start(config());

        input.pipeInput(bytes("order"), bytes("a"));
        input.pipeInput(bytes("order"), bytes("b"));
        Throwable thrown = catchThrowable(() -> input.pipeInput(bytes("order"), bytes("c")));

        assertThat(readOutput()).extracting(SequenceTopologyTest::number)
                .containsExactly(Long.MAX_VALUE - 1, Long.MAX_VALUE);
        assertThat(thrown).hasRootCauseInstanceOf(SequenceExhaustedException.class);
    }
}
