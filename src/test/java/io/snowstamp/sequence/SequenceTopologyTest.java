package io.snowstamp.sequence;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.stream.Names;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sequence mode through {@link TopologyTestDriver}: one task runs both steps (route, repartition,
 * number) on partition 0, with the tags topic as a global store, restarts on the same state
 * directory, and a fake output tail.
 */
class SequenceTopologyTest {

    private static final String INSTANCE = "test-instance";
    private static final long T0 = Instant.parse("2026-03-01T12:00:00Z").toEpochMilli();

    @TempDir
    Path stateDir;

    private final AtomicLong clock = new AtomicLong(T0);
    private final FakeTail tail = new FakeTail();
    private final List<TopologyTestDriver> open = new ArrayList<>();
    /** Every record piped to the tags topic: the driver's global store is in memory, so each start replays them. */
    private final List<Map.Entry<String, TagDefinition>> definitions = new ArrayList<>();

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> input;
    private TestInputTopic<String, TagDefinition> tags;
    private TestOutputTopic<byte[], byte[]> output;
    private TestOutputTopic<byte[], byte[]> dlq;
    private TestOutputTopic<String, SequenceState> changelog;

    /** A tail that reports what the test says and records how it was asked. */
    static final class FakeTail implements SequenceTail {
        final Map<String, Long> highest = new HashMap<>();
        long end = 0;
        final List<Long> scannedFrom = new ArrayList<>();
        int endOffsetCalls;

        @Override
        public Scan scan(int partition, long fromOffset) {
            scannedFrom.add(fromOffset);
            return new Scan(highest, highest.size(), Math.max(0, fromOffset), end, 1);
        }

        @Override
        public long endOffset(int partition) {
            endOffsetCalls++;
            return end;
        }
    }

    @AfterEach
    void closeDrivers() {
        open.forEach(TopologyTestDriver::close);
    }

    // ---- set-up

    private SnowstampConfig config(String... pairs) {
        Map<String, String> raw = new HashMap<>(Keys.defaults());
        raw.put(Keys.INSTANCE_ID, INSTANCE);
        raw.put(Keys.STATE_DIR, stateDir.toString());
        raw.put(Keys.BOOTSTRAP_SERVERS, "dummy:9092");
        raw.put(Keys.ID_MODE, "sequence");
        for (int i = 0; i < pairs.length; i += 2) {
            raw.put(pairs[i], pairs[i + 1]);
        }
        return SnowstampConfig.from(raw);
    }

    private void start(SnowstampConfig config) {
        start(config, 1);
    }

    private void start(SnowstampConfig config, int partitions) {
        keepTaskStateOnClose(config);
        driver = new TopologyTestDriver(SequenceTopology.build(config, partitions, clock::get, tail), KafkaSettings.streams(config));
        open.add(driver);
        input = driver.createInputTopic(config.inputTopic(), new ByteArraySerializer(), new ByteArraySerializer());
        tags = driver.createInputTopic(config.sequence().tagsTopic(), new StringSerializer(), new TagDefinitionSerde());
        output = driver.createOutputTopic(config.outputTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        dlq = driver.createOutputTopic(config.dlqTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        changelog = driver.createOutputTopic(SequenceNames.changelogTopic(config.applicationId()), new StringDeserializer(),
                new SequenceStateSerde());
        definitions.forEach(entry -> tags.pipeInput(entry.getKey(), entry.getValue()));
    }

    /** As in StampTopologyTest: a linked task directory survives {@code TopologyTestDriver.close()}. */
    private void keepTaskStateOnClose(SnowstampConfig config) {
        try {
            Path appDir = stateDir.resolve(INSTANCE).resolve(config.applicationId());
            Path kept = stateDir.resolve("kept-" + config.applicationId() + "-0_0");
            Files.createDirectories(appDir);
            Files.createDirectories(kept);
            Path task = appDir.resolve("0_0");
            if (!Files.isSymbolicLink(task)) {
                Files.createSymbolicLink(task, kept);
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private void restart(SnowstampConfig config) {
        driver.close();
        open.remove(driver);
        start(config);
    }

    /** Loses the local state: the next start has neither the store nor its changelog (a new application id). */
    private void wipeState(SnowstampConfig config) throws IOException {
        driver.close();
        open.remove(driver);
        Path kept = stateDir.resolve("kept-" + config.applicationId() + "-0_0");
        try (var files = Files.walk(kept)) {
            files.sorted(java.util.Comparator.reverseOrder()).filter(p -> !p.equals(kept)).forEach(p -> p.toFile().delete());
        }
    }

    private void create(String tag, long start, long step) {
        define(tag, new TagDefinition(start, step, 1, T0));
    }

    /** A record of the tags topic; null removes the tag. */
    private void define(String tag, TagDefinition definition) {
        definitions.add(new java.util.AbstractMap.SimpleEntry<>(tag, definition));
        tags.pipeInput(tag, definition);
    }

    private static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(UTF_8);
    }

    private static String header(TestRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), UTF_8);
    }

    private static long number(TestRecord<byte[], byte[]> record) {
        return Long.parseLong(header(record, Names.ID_HEADER));
    }

    /** Pipes {@code count} records keyed by {@code tag} and returns their numbers. */
    private List<Long> pipe(String tag, int count) {
        for (int i = 0; i < count; i++) {
            input.pipeInput(bytes(tag), bytes("{\"n\":" + i + "}"));
        }
        return output.readRecordsToList().stream().map(SequenceTopologyTest::number).toList();
    }

    private static List<Long> range(long first, long last) {
        List<Long> numbers = new ArrayList<>();
        for (long n = first; n <= last; n++) {
            numbers.add(n);
        }
        return numbers;
    }

    private SequenceState stored(String key) {
        KeyValueStore<String, SequenceState> store = driver.getKeyValueStore(SequenceNames.STORE);
        return store.get(key);
    }

    private TagSegment segment(String tag) {
        return (TagSegment) stored(tag);
    }

    private List<TagSegment> segmentWrites(String tag) {
        List<TagSegment> writes = new ArrayList<>();
        for (var record : changelog.readRecordsToList()) {
            if (record.key().equals(tag)) {
                writes.add((TagSegment) record.value());
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

        List<TestRecord<byte[], byte[]>> out = output.readRecordsToList();
        assertThat(out).extracting(r -> header(r, SequenceNames.TAG_HEADER)).containsExactly("order", "invoice", "order", "invoice");
        assertThat(out).extracting(SequenceTopologyTest::number).containsExactly(1001L, 1L, 1002L, 2L);
        assertThat(out).extracting(r -> new String(r.value(), UTF_8)).containsExactly("a", "b", "c", "d");
        assertThat(out).extracting(r -> header(r, Names.SOURCE_HEADER))
                .containsExactly("events.raw/0/0", "events.raw/0/1", "events.raw/0/2", "events.raw/0/3");
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void shouldPassKeyValueTimestampAndHeadersThroughAndAddTagThenNumberLast() {
        start(config());
        create("order", 1, 10);
        Instant timestamp = Instant.parse("2001-02-03T04:05:06.789Z");

        input.pipeInput(new TestRecord<>(bytes("order"), new byte[] {(byte) 0xc3, 0x28, 0},
                new RecordHeaders().add("trace", bytes("abc")).add(Names.ID_HEADER, bytes("77")), timestamp));

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.key()).isEqualTo(bytes("order"));
        assertThat(out.value()).containsExactly((byte) 0xc3, 0x28, 0);
        assertThat(out.getRecordTime()).isEqualTo(timestamp);
        assertThat(out.headers().toArray()).extracting(Header::key)
                .containsExactly("trace", Names.ID_HEADER, Names.SOURCE_HEADER, SequenceNames.TAG_HEADER, Names.ID_HEADER);
        assertThat(number(out)).as("readers take the last snowstamp-id").isEqualTo(1);
    }

    @Test
    void shouldWriteOneSegmentPerStepBeforeIssuingFromIt() {
        start(config());
        create("order", 1001, 10);

        assertThat(pipe("order", 25)).isEqualTo(range(1001, 1025));

        assertThat(segmentWrites("order")).extracting(TagSegment::segmentStart, TagSegment::maxId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1001L, 1010L),
                        org.assertj.core.groups.Tuple.tuple(1011L, 1020L),
                        org.assertj.core.groups.Tuple.tuple(1021L, 1030L));
        assertThat(segment("order")).isEqualTo(new TagSegment(1030, 1021, 10, 1, T0));
    }

    @Test
    void shouldReserveTheFirstSegmentWithTheFirstRecordOnly() {
        start(config());
        create("order", 1001, 10);
        assertThat(stored("order")).isNull();

        assertThat(pipe("order", 10)).isEqualTo(range(1001, 1010));

        assertThat(segmentWrites("order")).hasSize(1);
    }

    @Test
    void shouldResumeAfterTheReservedSegmentAfterARestart() {
        SnowstampConfig config = config();
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);

        restart(config);

        assertThat(pipe("order", 2)).as("1004..1010 were reserved and are skipped, never reissued").containsExactly(1011L, 1012L);
    }

    @Test
    void shouldApplyAStepChangeAtTheNextSegment() {
        start(config());
        create("order", 1001, 10);
        assertThat(pipe("order", 15)).isEqualTo(range(1001, 1015));

        define("order", new TagDefinition(1001, 100, 2, T0 + 1));

        assertThat(pipe("order", 10)).as("no gap: the current segment runs out first").isEqualTo(range(1016, 1025));
        assertThat(segmentWrites("order")).extracting(TagSegment::segmentStart, TagSegment::maxId, TagSegment::step, TagSegment::revision)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1001L, 1010L, 10L, 1L),
                        org.assertj.core.groups.Tuple.tuple(1011L, 1020L, 10L, 1L),
                        org.assertj.core.groups.Tuple.tuple(1021L, 1120L, 100L, 2L));
    }

    @Test
    void shouldKeepTagsIndependent() {
        start(config());
        create("a", 1, 2);
        create("b", 1, 3);
        for (int i = 0; i < 6; i++) {
            input.pipeInput(bytes(i % 2 == 0 ? "a" : "b"), bytes("x"));
        }
        List<TestRecord<byte[], byte[]>> out = output.readRecordsToList();
        assertThat(out).extracting(SequenceTopologyTest::number).containsExactly(1L, 1L, 2L, 2L, 3L, 3L);
        assertThat(segment("a").maxId()).isEqualTo(4);
        assertThat(segment("b").maxId()).isEqualTo(3);
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
        assertThat(header(dead, Names.ERROR_HEADER)).isEqualTo("unknown-tag");
        assertThat(header(dead, "__streams.errors.message")).contains("tag 'nope' is not registered");
        assertThat(header(dead, "__streams.errors.topic")).isEqualTo("events.raw");
        assertThat(header(dead, "__streams.errors.offset")).isEqualTo("0");
        assertThat(dead.headers().headers(Names.SOURCE_HEADER)).isEmpty();
        assertThat(output.readRecordsToList()).extracting(SequenceTopologyTest::number).containsExactly(1L);
        assertThat(stored("nope")).isNull();
    }

    @Test
    void shouldAutoCreateAnUnknownTagWithTheDefaultsWhenConfigured() {
        start(config(Keys.SEQUENCE_AUTO_CREATE, "true", Keys.SEQUENCE_DEFAULT_START, "100", Keys.SEQUENCE_DEFAULT_STEP, "4"));

        assertThat(pipe("fresh", 5)).containsExactly(100L, 101L, 102L, 103L, 104L);

        assertThat(dlq.isEmpty()).isTrue();
        assertThat(segment("fresh")).isEqualTo(new TagSegment(107, 104, 4, 0, T0));
    }

    @Test
    void shouldLetARegisteredDefinitionWinOverTheDefaultsOfAnAutoCreatedTag() {
        start(config(Keys.SEQUENCE_AUTO_CREATE, "true", Keys.SEQUENCE_DEFAULT_STEP, "4"));
        assertThat(pipe("t", 2)).containsExactly(1L, 2L);

        create("t", 1, 50);

        assertThat(pipe("t", 4)).as("the old segment runs out, the next one has the registered step").containsExactly(3L, 4L, 5L, 6L);
        assertThat(segment("t")).isEqualTo(new TagSegment(54, 5, 50, 1, T0));
    }

    @Test
    void shouldNeverGoBackWhenATagIsCreatedAgainWithALowerStart() {
        SnowstampConfig config = config();
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);

        define("order", null);                       // deleted by hand
        define("order", new TagDefinition(1, 10, 1, T0));
        restart(config);

        assertThat(pipe("order", 1)).containsExactly(1011L);
    }

    @Test
    void shouldJumpForwardWhenATagIsCreatedAgainWithAHigherStart() {
        start(config());
        create("order", 1, 5);
        assertThat(pipe("order", 5)).isEqualTo(range(1, 5));

        define("order", new TagDefinition(9000, 5, 2, T0));

        assertThat(pipe("order", 2)).as("at the next segment").containsExactly(9000L, 9001L);
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

        assertThat(dlq.readRecordsToList()).extracting(r -> header(r, Names.ERROR_HEADER))
                .containsExactly("no-tag", "no-tag", "invalid-tag", "invalid-tag", "invalid-tag");
        assertThat(output.readRecordsToList()).extracting(r -> new String(r.value(), UTF_8)).containsExactly("longest tag");
    }

    @Test
    void shouldTakeTheTagFromAJsonFieldAndSpliceTheNumberIn() {
        start(config(Keys.SEQUENCE_TAG_SOURCE, "field:kind", Keys.STAMP_JSON_FIELD, "no"));
        create("order", 7, 10);
        create("42", 1, 10);

        input.pipeInput(bytes("user-1"), bytes("{\"kind\":\"order\",\"x\":{\"kind\":\"nested\"}}"));
        input.pipeInput(bytes("user-2"), bytes("{\"kind\":42}"));

        List<TestRecord<byte[], byte[]>> out = output.readRecordsToList();
        assertThat(out).extracting(r -> new String(r.value(), UTF_8))
                .containsExactly("{\"no\":7,\"kind\":\"order\",\"x\":{\"kind\":\"nested\"}}", "{\"no\":1,\"kind\":42}");
        assertThat(out).extracting(r -> new String(r.key(), UTF_8)).containsExactly("user-1", "user-2");
        assertThat(out).extracting(r -> header(r, SequenceNames.TAG_HEADER)).containsExactly("order", "42");
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

        assertThat(dlq.readRecordsToList()).extracting(r -> header(r, Names.ERROR_HEADER))
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
        assertThat(dead).extracting(r -> header(r, Names.ERROR_HEADER)).containsExactly("field-exists", "not-object");
        assertThat(dead).extracting(r -> header(r, "__streams.errors.topic")).containsOnly("events.raw");
        assertThat(output.readRecordsToList()).extracting(r -> new String(r.value(), UTF_8)).containsExactly("{\"no\":1,\"a\":1}");
    }

    // ---- the tail and the checkpoint

    @Test
    void shouldResumeAboveTheTailWhenTheStateIsLost() throws IOException {
        SnowstampConfig config = config();
        start(config);
        create("order", 1001, 10);
        assertThat(pipe("order", 3)).containsExactly(1001L, 1002L, 1003L);
        wipeState(config);
        tail.highest.put("order", 1003L);
        tail.highest.put("gone", 77L);
        tail.end = 3;

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
        tail.highest.put("order", 25L);        // e.g. at-least-once: records out, state write lost

        restart(config);

        assertThat(segment("order")).isEqualTo(new TagSegment(25, -1, 0, 1, T0));
        assertThat(pipe("order", 1)).containsExactly(26L);
    }

    @Test
    void shouldNotLowerAStoredTagThatTheTailShowsLower() {
        SnowstampConfig config = config();
        start(config);
        create("order", 1, 10);
        assertThat(pipe("order", 4)).containsExactly(1L, 2L, 3L, 4L);
        tail.highest.put("order", 4L);

        restart(config);

        assertThat(pipe("order", 1)).containsExactly(11L);
    }

    @Test
    void shouldScanFromTheCheckpointTheRestoredStateCovers() {
        SnowstampConfig config = config();
        tail.end = 7;
        start(config);
        assertThat(stored(SequenceState.CHECKPOINT_KEY)).isEqualTo(new PartitionCheckpoint(1, 7, 1, INSTANCE + "/" + Thread.currentThread().getName(), T0, T0));

        tail.end = 12;
        restart(config);

        assertThat(tail.scannedFrom).containsExactly(-1L, 7L);
        PartitionCheckpoint checkpoint = (PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY);
        assertThat(checkpoint.coveredOffset()).isEqualTo(12);
        assertThat(checkpoint.epoch()).isEqualTo(2);
    }

    @Test
    void shouldMoveTheCheckpointForwardEveryInterval() {
        start(config(Keys.SEQUENCE_CHECKPOINT_INTERVAL, "10s"));
        tail.end = 40;
        clock.addAndGet(10_000);

        driver.advanceWallClockTime(Duration.ofSeconds(10));

        assertThat(tail.endOffsetCalls).isEqualTo(1);
        PartitionCheckpoint checkpoint = (PartitionCheckpoint) stored(SequenceState.CHECKPOINT_KEY);
        assertThat(checkpoint.coveredOffset()).isEqualTo(40);
        assertThat(checkpoint.checkpointAt()).isEqualTo(T0 + 10_000);
    }

    @Test
    void shouldNotReadTheTailWhenTheTailGuardIsOff() {
        start(config(Keys.RECOVERY_TAIL_GUARD, "true"));
        driver.close();
        open.remove(driver);
        SnowstampConfig off = config(Keys.RECOVERY_TAIL_GUARD, "false");
        keepTaskStateOnClose(off);
        driver = new TopologyTestDriver(SequenceTopology.build(off, 1, clock::get, SequenceTail.disabled()), KafkaSettings.streams(off));
        open.add(driver);

        PartitionCheckpoint checkpoint = (PartitionCheckpoint) driver.<String, SequenceState>getKeyValueStore(SequenceNames.STORE)
                .get(SequenceState.CHECKPOINT_KEY);
        assertThat(checkpoint.coveredOffset()).as("kept, not advanced").isEqualTo(0);
        assertThat(checkpoint.epoch()).isEqualTo(2);
    }

    @Test
    void shouldRefuseToStartWhenTheOutputPartitionCountChanged() {
        SnowstampConfig config = config();
        start(config, 1);
        driver.close();
        open.remove(driver);

        Throwable thrown = catchThrowable(() -> start(config, 3));

        assertThat(thrown).hasRootCauseInstanceOf(PartitionsChangedException.class)
                .rootCause().hasMessageContaining("written for 1 output partitions, the output topic now has 3");
    }

    @Test
    void shouldStopRatherThanWrapPastTheLargestNumber() {
        start(config());
        create("order", 1, 10);
        driver.close();
        open.remove(driver);
        tail.highest.put("order", Long.MAX_VALUE - 2);
        start(config());

        input.pipeInput(bytes("order"), bytes("a"));
        input.pipeInput(bytes("order"), bytes("b"));
        Throwable thrown = catchThrowable(() -> input.pipeInput(bytes("order"), bytes("c")));

        assertThat(output.readRecordsToList()).extracting(SequenceTopologyTest::number)
                .containsExactly(Long.MAX_VALUE - 1, Long.MAX_VALUE);
        assertThat(thrown).hasRootCauseInstanceOf(SequenceExhaustedException.class);
    }
}
