package io.snowstamp.stream;

import io.snowstamp.ownership.LayoutChangedException;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.ownership.LeadWatch;
import io.snowstamp.ownership.PredecessorFence;

import static io.snowstamp.testing.TopologyDrivers.INSTANCE;
import static io.snowstamp.testing.TopologyDrivers.T0;
import static io.snowstamp.testing.TopologyDrivers.bytes;
import static io.snowstamp.testing.TopologyDrivers.header;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.BadRecordException;
import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.state.IdHeader;
import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.resume.TailProbe;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.testing.TopologyDrivers;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The stamper through {@link TopologyTestDriver}. The driver runs a single task, {@code 0_0}: every
 * record is piped to input partition 0, so these tests cover partition 0 (worker = offset + 0);
 * {@link AlignedPartitionerTest} covers the partition mapping for the others.
 */
class StampTopologyTest {

    private static final long HOUR = 3_600_000L;
    private static final ObjectMapper JSON = new ObjectMapper();

    @AutoClose
    private final TopologyDrivers drivers = new TopologyDrivers();
    private final AtomicLong clock = drivers.clock();
    private TailProbe tailProbe = TailProbe.disabled();
    /** Where tasks take their leases: none unless a test holds one ({@link #heldLeases}). */
    private io.snowstamp.lease.Leases leases = io.snowstamp.lease.Leases.none();
    /** The ID's value field; {@code null}: the config's. */
    private ValueField values;
    /** The highest ID {@link #pipe} returned (-1: none). */
    private long highestPiped = -1;
    private StamperStats stats;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> input;
    private TestOutputTopic<byte[], byte[]> output;
    private TestOutputTopic<byte[], byte[]> dlq;

    // ---- set-up

    /**
     * Without the tail guard unless a test says otherwise: the driver's tail probe reads nothing, and under exactly-once
     * the exact {@code lastId} at every commit is then what a restart resumes above.
     */
    private SnowstampConfig config(String... pairs) {
        return drivers.base(Keys.ID_WORKER_OFFSET, "5", Keys.RECOVERY_TAIL_GUARD, "false").with(pairs);
    }

    private TopologyTestDriver start(SnowstampConfig config) {
        stats = new StamperStats();
        return startKeepingStats(config);
    }

    /** Starts the task again in the same process: its counters go on in the instance's {@link #stats}. */
    private TopologyTestDriver startKeepingStats(SnowstampConfig config) {
        // a persistent store: the driver restores nothing from a changelog, only a store kept on disk survives restart()
        driver = drivers.start(StampTopology.build(config, clock::get, tailProbe, stats, worker -> -1,
                        PredecessorFence.none(), leases, null, WriteAcks.immediate(),
                        org.apache.kafka.streams.state.Stores.persistentKeyValueStore(Names.STORE),
                        values != null ? values : StampTopology.valueField(config, clock::get, stats)),
                withStats(KafkaSettings.streams(config.connection(), config.topics())));
        // every input at one known time: the output records of the at-least-once tests carry it, as Kafka Streams forwards it
        input = driver.createInputTopic(config.topics().input(), new ByteArraySerializer(), new ByteArraySerializer(),
                Instant.ofEpochMilli(INPUT_TIME), Duration.ZERO);
        output = driver.createOutputTopic(config.topics().output(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        dlq = driver.createOutputTopic(config.topics().dlq(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        return driver;
    }

    /** The dead-letter handler counts into the test's stats, as the runner's does. */
    private java.util.Properties withStats(java.util.Properties props) {
        props.put(DeadLetterHandler.STATS_CONFIG, stats);
        return props;
    }

    private void restart(SnowstampConfig config) {
        drivers.stop(driver);
        start(config);
    }

    private static long id(TestRecord<byte[], byte[]> record) {
        return Long.parseLong(header(record, IdHeader.ID));
    }

    private List<Long> pipe(int count) {
        for (int i = 0; i < count; i++) {
            input.pipeInput(bytes("k" + i), bytes("{\"n\":" + i + "}"));
        }
        List<Long> ids = output.readRecordsToList().stream().map(StampTopologyTest::id).toList();
        ids.forEach(id -> highestPiped = Math.max(highestPiped, id));
        return ids;
    }

    /** Fires the heartbeat punctuator ({@code lease.heartbeat}, 5 s by default, on the driver's wall clock). */
    private void heartbeat() {
        driver.advanceWallClockTime(Duration.ofSeconds(5));
    }

    private WorkerState storedState() {
        KeyValueStore<Integer, WorkerState> store = driver.getKeyValueStore(Names.STORE);
        return store.get(0);
    }

    // ---- the worker-state store

    @Test
    void shouldKeepTheWorkerStateStoreFreeOfKafkaStreamsStoreMetrics() {
        start(config());
        pipe(2);

        // the metered layer's ~40 metrics per task (put-rate, get-latency-avg, ...) each cost a JMX registration at
        // every task start: a takeover of 512 tasks spent a third of its stream thread's time on them
        assertThat(driver.metrics().keySet())
                .filteredOn(name -> name.tags().containsValue(Names.STORE))
                .extracting(org.apache.kafka.common.MetricName::name)
                .doesNotContain("put-rate", "put-latency-avg", "get-rate", "flush-rate", "num-open-iterators");
        assertThat(storedState().lastId()).isPositive();
    }

    @Test
    void shouldReadTheWorkerStatesBackThroughEveryKindOfRead() {
        start(config());
        pipe(1);
        KeyValueStore<Integer, WorkerState> store = driver.getKeyValueStore(Names.STORE);
        WorkerState state = store.get(0);

        assertThat(state).isNotNull();
        try (var all = store.all()) {
            assertThat(all.peekNextKey()).isZero();
            assertThat(all.next()).isEqualTo(org.apache.kafka.streams.KeyValue.pair(0, state));
            assertThat(all.hasNext()).isFalse();
        }
        try (var reverse = store.reverseAll(); var range = store.range(0, 0); var reverseRange = store.reverseRange(0, 0);
             var unbounded = store.range(null, null)) {
            for (var it : List.of(reverse, range, reverseRange, unbounded)) {
                assertThat(it.next()).isEqualTo(org.apache.kafka.streams.KeyValue.pair(0, state));
                assertThat(it.hasNext()).isFalse();
            }
        }
        try (var none = store.range(1, 5)) {
            assertThat(none.hasNext()).isFalse();
        }
        assertThat(store.get(1)).isNull();
    }

    // ---- header mode

    @Test
    void shouldStampADecimalIdHeaderThatDecodesToWorkerAndClock() {
        SnowstampConfig config = config();
        start(config);

        input.pipeInput(bytes("k"), bytes("v"));

        TestRecord<byte[], byte[]> out = output.readRecord();
        String idText = header(out, IdHeader.ID);
        assertThat(idText).matches("[1-9][0-9]*");
        DecodedId decoded = config.ids().layout().decode(Long.parseLong(idText));
        assertThat(decoded.worker()).isEqualTo(5);
        assertThat(decoded.datacenter()).isZero();
        assertThat(decoded.sequence()).isZero();
        assertThat(decoded.wallMillis()).isEqualTo(T0);
        assertThat(Long.parseLong(idText)).isEqualTo(config.ids().layout().encode(T0 - IdLayout.DEFAULT_EPOCH_MILLIS, 0, 5, 0));
        assertThat(output.isEmpty()).isTrue();
    }

    @Test
    void shouldAddProvenanceWithTopicPartitionAndOffset() {
        start(config());

        input.pipeInput(bytes("a"), bytes("1"));
        input.pipeInput(bytes("b"), bytes("2"));
        input.pipeInput(bytes("c"), bytes("3"));

        assertThat(output.readRecordsToList()).extracting(r -> header(r, IdHeader.SOURCE))
                .containsExactly("events.raw/0/0", "events.raw/0/1", "events.raw/0/2");
    }

    // ---- at-least-once: inputs the previous owner stamped are not stamped again

    /** A tail probe whose start read answers {@code newest}, its read further back {@code further}. */
    private static TailProbe probe(TailProbe.Result newest, java.util.function.LongFunction<io.snowstamp.resume.StampedInputs> further) {
        return new TailProbe() {
            @Override
            public Result highestIssued(int partition, long datacenter, long worker) {
                return newest;
            }

            @Override
            public io.snowstamp.resume.StampedInputs stampedInputs(int partition, String inputTopic, long from) {
                return further.apply(from);
            }
        };
    }

    /** The time of every input the tests pipe (see {@link #startKeepingStats}). */
    private static final long INPUT_TIME = 1_700_000_000_000L;

    /**
     * An output record as the tail guard reads it at output offset {@code offset}, with the provenance {@code source} and
     * its input's identity: the time every input has here, and the key {@code k<n>} the tests give input n.
     */
    private static org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> stamped(long offset, String source, long time,
                                                                                       org.apache.kafka.common.record.TimestampType type) {
        var record = new org.apache.kafka.clients.consumer.ConsumerRecord<>("events.stamped", 0, offset, time, type, 0, 0, bytes("k" + source.substring(source.lastIndexOf('/') + 1)),
                bytes("v"), new org.apache.kafka.common.header.internals.RecordHeaders(), java.util.Optional.empty());
        record.headers().add(IdHeader.SOURCE, bytes(source));
        return record;
    }

    /**
     * The tail the start reads: output records of inputs {@code sources}, at contiguous offsets with nothing open;
     * {@code fromBeginning}: the whole partition.
     */
    private static io.snowstamp.resume.StampedInputs.Window tail(boolean fromBeginning, String... sources) {
        return tail(INPUT_TIME, org.apache.kafka.common.record.TimestampType.CREATE_TIME, fromBeginning, sources);
    }

    /** The same, the output records carrying {@code time} of {@code type}. */
    private static io.snowstamp.resume.StampedInputs.Window tail(long time, org.apache.kafka.common.record.TimestampType type,
                                                                 boolean fromBeginning, String... sources) {
        var window = new io.snowstamp.resume.StampedInputs.Window("events.raw", 0);
        for (int i = 0; i < sources.length; i++) {
            window.note(stamped(i, sources[i], time, type));
        }
        window.readRange(0, sources.length, sources.length);
        if (fromBeginning) {
            window.reachedBegin();
        }
        return window;
    }

    /** consuming.md: nothing issued for them, one INFO line (inputs-already-stamped) per task start, not one per input. */
    @Test
    void shouldNotStampAgainTheInputsThePreviousOwnerStampedBeforeItsOffsetsWereCommitted() throws Exception {
        // the previous owner stamped inputs 0..4 and died before committing: the new task starts again at offset 0
        var window = tail(true, "events.raw/0/0", "events.raw/0/1", "other.topic/0/7", "events.raw/0/2", "events.raw/0/3",
                "events.raw/0/4");
        tailProbe = (partition, datacenter, worker) -> new TailProbe.Result(-1, 6, 0, 6, 0, window);
        // StampedCheck logs as its task, under StampProcessor's name
        var lines = io.snowstamp.testing.Logback.capture(StampProcessor.class, () -> {
            start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true"));
            for (int i = 0; i < 8; i++) {
                input.pipeInput(bytes("k" + i), bytes("{\"n\":" + i + "}"));
            }
        });

        assertThat(output.readRecordsToList()).as("each input once in the output").extracting(r -> header(r, IdHeader.SOURCE))
                .containsExactly("events.raw/0/5", "events.raw/0/6", "events.raw/0/7");
        assertThat(stats.tasks().get(0).skippedStampedInputs()).isEqualTo(5);
        assertThat(io.snowstamp.testing.Logback.events(lines, "inputs-already-stamped")).as("one line for the task's start")
                .containsExactly(java.util.Map.of("event", "inputs-already-stamped", "partition", 0, "skipped", 5, "level", "INFO"));
    }

    /**
     * The input topic deleted and created again: its offsets start at 0 again under the old incarnation's provenance in
     * the output. The new inputs at those offsets are other inputs (another time): every one is stamped, none lost.
     */
    @Test
    void shouldStampTheInputsAtOffsetsTheOutputNamesWhenTheyAreOtherInputs() {
        var window = tail(INPUT_TIME - 86_400_000, org.apache.kafka.common.record.TimestampType.CREATE_TIME, true,
                "events.raw/0/0", "events.raw/0/1", "events.raw/0/2", "events.raw/0/3", "events.raw/0/4");
        tailProbe = (partition, datacenter, worker) -> new TailProbe.Result(-1, 5, 0, 5, 0, window);
        start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true"));

        assertThat(pipe(5)).as("inputs 0..4 of the new topic, none in the output").hasSize(5);
        assertThat(stats.tasks().get(0).skippedStampedInputs()).isZero();
    }

    /** An output topic with message.timestamp.type=LogAppendTime: no output record identifies its input, none is skipped. */
    @Test
    void shouldSkipNothingWhereTheOutputCarriesTheBrokersTimeAndSaySoOnce() throws Exception {
        var window = tail(INPUT_TIME, org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME, true,
                "events.raw/0/0", "events.raw/0/1", "events.raw/0/2");
        tailProbe = (partition, datacenter, worker) -> new TailProbe.Result(-1, 3, 0, 3, 0, window);
        var lines = io.snowstamp.testing.Logback.capture(StampProcessor.class, () -> {
            start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true"));
            assertThat(pipe(4)).as("every input stamped: copies, never a loss").hasSize(4);
        });

        assertThat(stats.tasks().get(0).skippedStampedInputs()).isZero();
        assertThat(lines).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .filteredOn(line -> line.contains("LogAppendTime")).as("one line for the task").singleElement().asString()
                .contains("partition 0: 3 output records of inputs from offset 0 on carry the time the broker wrote them");
    }

    /**
     * Records set aside while the read further back runs are checked on their way out with their own timestamp: of two
     * inputs the output names, only the one whose output record carries its time is skipped.
     */
    @Test
    void shouldSkipOnTheWayOutOnlyTheSetAsideInputsWhoseOutputRecordCarriesTheirTime() {
        var further = new io.snowstamp.resume.StampedInputs.Window("events.raw", 0);
        further.note(stamped(0, "events.raw/0/0", INPUT_TIME - 1, org.apache.kafka.common.record.TimestampType.CREATE_TIME));
        further.note(stamped(1, "events.raw/0/1", INPUT_TIME, org.apache.kafka.common.record.TimestampType.CREATE_TIME));
        further.readRange(0, 2, 2);
        further.reachedBegin();
        tailProbe = probe(new TailProbe.Result(-1, 1, 5, 6, 0, tail(false, "events.raw/0/5")),
                from -> io.snowstamp.resume.StampedInputs.of(further, from, start -> null));
        start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true"));
        pipe(3);
        drainUntil(() -> stats.tasks().get(0).skippedStampedInputs() > 0 && output.getQueueSize() >= 2);

        assertThat(output.readRecordsToList()).as("input 0's output record is another input's: stamped")
                .extracting(r -> header(r, IdHeader.SOURCE)).containsExactly("events.raw/0/0", "events.raw/0/2");
        assertThat(stats.tasks().get(0).skippedStampedInputs()).isEqualTo(1);
    }

    @Test
    void shouldReadTheOutputFurtherBackBesideTheThreadWhenTheStartsTailDoesNotReachTheCommittedOffset() throws Exception {
        List<String> reads = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch readMayEnd = new java.util.concurrent.CountDownLatch(1);
        tailProbe = new TailProbe() {
            @Override
            public Result highestIssued(int partition, long datacenter, long worker) {
                // the newest records only: inputs 2..4, nothing below the first input the task will see (0)
                return new Result(-1, 3, 3, 6, 0, tail(false, "events.raw/0/2", "events.raw/0/3", "events.raw/0/4"));
            }

            @Override
            public io.snowstamp.resume.StampedInputs stampedInputs(int partition, String inputTopic, long from) {
                reads.add(partition + " " + inputTopic + " " + from + " on " + Thread.currentThread().getName());
                try {
                    readMayEnd.await(5, java.util.concurrent.TimeUnit.SECONDS);     // a slow output: the stream thread must not wait
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                // inputs 0 and 1 already have an output record
                return io.snowstamp.resume.StampedInputs.of(tail(true, "events.raw/0/0", "events.raw/0/1"), from, start -> null);
            }
        };
        start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true"));

        assertThat(pipe(3)).as("set aside while the read runs; pipeInput returned: the thread did not wait").isEmpty();
        readMayEnd.countDown();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        List<TestRecord<byte[], byte[]>> out = new ArrayList<>();
        while (out.isEmpty() && System.nanoTime() < deadline) {
            driver.advanceWallClockTime(Duration.ofMillis(10));
            out.addAll(output.readRecordsToList());
        }
        assertThat(out).as("inputs 0 and 1 skipped, input 2 stamped").extracting(r -> header(r, IdHeader.SOURCE))
                .containsExactly("events.raw/0/2");
        assertThat(reads).as("one read, at the first input (the committed offset), beside the stream thread")
                .containsExactly("0 events.raw 0 on snowstamp-output-read");
        assertThat(pipe(1)).as("later inputs are stamped at once").hasSize(1);
    }

    /** Either failure: a timeout (the WARN names the setting to raise, issue 41) or a refusal (it does not). */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void shouldStampEverySetAsideInputWithAWarningWhenTheReadFurtherBackFails(boolean ranOutOfTime) throws Exception {
        RuntimeException failure = ranOutOfTime ? new org.apache.kafka.common.errors.TimeoutException("1 not read to their end in 60 s")
                : new org.apache.kafka.common.errors.TopicAuthorizationException("Not authorized to access topics: [events.stamped]");
        java.util.concurrent.CountDownLatch readMayFail = new java.util.concurrent.CountDownLatch(1);
        tailProbe = new TailProbe() {
            @Override
            public Result highestIssued(int partition, long datacenter, long worker) {
                // the newest records only: nothing below the first input the task will see (0), so the check reads further back
                return new Result(-1, 1, 5, 6, 0, tail(false, "events.raw/0/5"));
            }

            @Override
            public io.snowstamp.resume.StampedInputs stampedInputs(int partition, String inputTopic, long from) {
                try {
                    // fail only once the records are set aside: the promise is about those
                    readMayFail.await(5, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                throw failure;
            }
        };
        ch.qos.logback.classic.Logger logger = io.snowstamp.testing.Logback.logger(StampProcessor.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines = new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        List<TestRecord<byte[], byte[]>> out = new ArrayList<>();
        try {
            start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true"));
            assertThat(pipe(3)).as("set aside while the read runs").isEmpty();
            readMayFail.countDown();
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (out.size() < 3 && System.nanoTime() < deadline) {
                driver.advanceWallClockTime(Duration.ofMillis(10));
                out.addAll(output.readRecordsToList());
            }
        } finally {
            logger.detachAppender(lines);
        }

        // a failed read may cost copies, never a loss: every input set aside comes out stamped, in order
        assertThat(out).as("every set-aside input stamped").extracting(r -> header(r, IdHeader.SOURCE))
                .containsExactly("events.raw/0/0", "events.raw/0/1", "events.raw/0/2");
        assertThat(out).extracting(StampTopologyTest::id).allMatch(id -> id > 0).doesNotHaveDuplicates();
        assertThat(dlq.isEmpty()).as("nothing dead-lettered").isTrue();
        assertThat(stats.tasks().get(0).skippedStampedInputs()).isZero();
        assertThat(lines.list).filteredOn(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                .extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).singleElement().asString()
                .contains("partition 0: cannot read which inputs from offset 0 on are already stamped (" + failure.getMessage() + ")",
                        "stamping them all", "nothing is lost")
                .satisfies(line -> assertThat(line.contains("(it ran out of time: raise recovery.tail-guard-timeout)"))
                        .as("names the setting to raise").isEqualTo(ranOutOfTime));
        assertThat(pipe(1)).as("later inputs are stamped at once").hasSize(1);
    }

    /** Advances the driver's wall clock 10 ms at a time (the drain's punctuation) until {@code done}; at most 10 s. */
    private void drainUntil(java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            driver.advanceWallClockTime(Duration.ofMillis(10));
        }
        assertThat(done.getAsBoolean()).as("reached within 10 s").isTrue();
    }

    @Test
    void shouldNotStampAgainAnInputFoundInTheOutputThatStillWaitsSetAsideWhenLaterInputsArrive() {
        // the start's tail reaches no input below the first (0): the read further back finds input 1 in the output
        tailProbe = probe(new TailProbe.Result(-1, 1, 1, 2, 0, tail(false, "events.raw/0/1")),
                from -> io.snowstamp.resume.StampedInputs.of(tail(true, "events.raw/0/1"), from, start -> null));
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(StampProcessor.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines = new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true",
                    Keys.ID_ON_EXCESS_LEAD, "pause", Keys.ID_MAX_LEAD, "10s"));
            clock.addAndGet(-HOUR);         // the next ID would run an hour ahead: the records set aside wait after the read

            assertThat(pipe(2)).as("inputs 0 and 1, set aside while the read runs").isEmpty();
            drainUntil(() -> lines.list.stream().anyMatch(e -> e.getFormattedMessage().contains("stamped by the previous owner")));
            assertThat(pipe(1)).as("input 2 arrives past every input found, behind the two still unchecked").isEmpty();
            clock.addAndGet(HOUR);
            driver.advanceWallClockTime(Duration.ofMillis(100));
        } finally {
            logger.detachAppender(lines);
        }

        assertThat(output.readRecordsToList()).as("input 1 is in the output already: not stamped again")
                .extracting(r -> header(r, IdHeader.SOURCE)).containsExactly("events.raw/0/0", "events.raw/0/2");
        assertThat(stats.tasks().get(0).skippedStampedInputs()).isEqualTo(1);
    }

    @Test
    void shouldNotStampAgainTheRecordsRestoredSetAsideThatThePreviousOwnerStampedBeforeItsLastCommit() {
        SnowstampConfig config = config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAIL_GUARD, "true",
                Keys.ID_ON_EXCESS_LEAD, "pause", Keys.ID_MAX_LEAD, "10s");
        tailProbe = (partition, datacenter, worker) -> new TailProbe.Result(-1, 0, 0, 0, 0, tail(true));
        start(config);
        clock.addAndGet(-HOUR);
        assertThat(pipe(3)).as("inputs 0, 1 and 2 set aside, committed with their offsets").isEmpty();
        clock.addAndGet(HOUR);

        // the owner stamped inputs 0 and 1 from the store and stopped before a commit removed them there: the next start
        // restores all three, and its first input (if any ever comes) is past them
        var window = tail(true, "events.raw/0/0", "events.raw/0/1");
        tailProbe = (partition, datacenter, worker) -> new TailProbe.Result(-1, 2, 0, 2, 0, window);
        restart(config);
        driver.advanceWallClockTime(Duration.ofMillis(100));

        assertThat(output.readRecordsToList()).as("only the restored record not in the output yet is stamped")
                .extracting(r -> header(r, IdHeader.SOURCE)).containsExactly("events.raw/0/2");
        assertThat(stats.tasks().get(0).skippedStampedInputs()).isEqualTo(2);
    }

    @Test
    void shouldStampEveryInputUnderExactlyOnceWhoseAbortedCopiesAreNoCopies() {
        var window = tail(true, "events.raw/0/0", "events.raw/0/1");
        tailProbe = (partition, datacenter, worker) -> new TailProbe.Result(-1, 2, 0, 2, 0, window);
        start(config(Keys.RECOVERY_TAIL_GUARD, "true"));

        assertThat(pipe(3)).as("under exactly-once an uncommitted input's output was aborted with it").hasSize(3);
    }

    @Test
    void shouldOmitProvenanceWhenDisabled() {
        start(config(Keys.STAMP_PROVENANCE, "false"));

        input.pipeInput(bytes("a"), bytes("1"));

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.headers().headers(IdHeader.SOURCE)).isEmpty();
        assertThat(out.headers().toArray()).extracting(Header::key).containsExactly(IdHeader.ID);
    }

    @Test
    void shouldWriteTheSameIdsAndProvenanceInEightBytesEachInTheCompactFormat() {
        SnowstampConfig config = config(Keys.STAMP_HEADER_FORMAT, "compact");
        start(config);
        Headers stampedBefore = new RecordHeaders().add(IdHeader.ID, bytes("42"));     // an input stamped before keeps its header

        input.pipeInput(bytes("a"), bytes("1"));
        input.pipeInput(new TestRecord<>(bytes("b"), bytes("2"), stampedBefore));

        List<TestRecord<byte[], byte[]>> out = output.readRecordsToList();
        assertThat(out.get(0).headers().toArray()).extracting(Header::key).containsExactly(IdHeader.COMPACT_SOURCE, IdHeader.COMPACT_ID);
        assertThat(out.get(0).headers().lastHeader(IdHeader.COMPACT_ID).value()).hasSize(8);
        long first = IdHeader.idOf(out.get(0).headers());
        assertThat(first).isEqualTo(config.ids().layout().encode(T0 - IdLayout.DEFAULT_EPOCH_MILLIS, 0, 5, 0));
        assertThat(IdHeader.idOf(out.get(1).headers())).as("the stamper's header comes last").isEqualTo(first + 1);
        assertThat(IdHeader.sourceText(out.get(1).headers(), "events.raw", 0)).isEqualTo("events.raw/0/1");
        assertThat(out.get(1).headers().lastHeader(IdHeader.ID).value()).isEqualTo(bytes("42"));
    }

    @Test
    void shouldPutTheDecimalIdInTheJsonFieldAndTheBinaryOneInTheHeaderInTheCompactFormat() throws IOException {
        start(config(Keys.STAMP_HEADER_FORMAT, "compact", Keys.STAMP_JSON_FIELD, "id", Keys.STAMP_PROVENANCE, "false"));

        input.pipeInput(bytes("a"), bytes("{\"n\":1}"));

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.headers().toArray()).extracting(Header::key).containsExactly(IdHeader.COMPACT_ID);
        assertThat(JSON.readTree(out.value()).get("id").asLong()).isEqualTo(IdHeader.idOf(out.headers()));
    }

    @Test
    void shouldPassKeyValueTimestampAndHeadersThrough() {
        start(config());
        byte[] key = {0, 1, 2, (byte) 0xff};
        byte[] value = {(byte) 0xc3, 0x28, 0, 7};  // not UTF-8, not JSON: header mode never looks
        Headers headers = new RecordHeaders()
                .add("trace", bytes("abc"))
                .add("trace", bytes("def"))
                .add("empty", new byte[0])
                .add("nothing", null);
        Instant timestamp = Instant.parse("2001-02-03T04:05:06.789Z");

        input.pipeInput(new TestRecord<>(key, value, headers, timestamp));

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.key()).containsExactly(key);
        assertThat(out.value()).containsExactly(value);
        assertThat(out.getRecordTime()).isEqualTo(timestamp);
        Header[] all = out.headers().toArray();
        assertThat(all).hasSize(6);
        assertThat(all).extracting(Header::key).startsWith("trace", "trace", "empty", "nothing")
                .containsOnlyOnce(IdHeader.ID, IdHeader.SOURCE);
        assertThat(all[0].value()).isEqualTo(bytes("abc"));
        assertThat(all[1].value()).isEqualTo(bytes("def"));
        assertThat(all[2].value()).isEmpty();
        assertThat(all[3].value()).isNull();
    }

    @Test
    void shouldAppendItsOwnIdAfterAnIdHeaderAlreadyOnTheInput() {
        start(config());

        input.pipeInput(new TestRecord<>(bytes("k"), bytes("v"), new RecordHeaders().add(IdHeader.ID, bytes("123"))));

        TestRecord<byte[], byte[]> out = output.readRecord();
        List<String> ids = new ArrayList<>();
        out.headers().headers(IdHeader.ID).forEach(h -> ids.add(new String(h.value(), UTF_8)));
        assertThat(ids).hasSize(2).first().isEqualTo("123");
        assertThat(id(out)).as("readers take the last one").isEqualTo(Long.parseLong(ids.get(1))).isNotEqualTo(123L);
    }

    @Test
    void shouldPassANullKeyThrough() {
        start(config());

        input.pipeInput((byte[]) null, bytes("v"));

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.key()).isNull();
        assertThat(out.value()).isEqualTo(bytes("v"));
        assertThat(header(out, IdHeader.ID)).isNotNull();
    }

    @Test
    void shouldStampATombstoneInHeaderMode() {
        SnowstampConfig config = config();
        start(config);

        input.pipeInput(bytes("deleted"), (byte[]) null);

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.key()).isEqualTo(bytes("deleted"));
        assertThat(out.value()).isNull();
        assertThat(config.ids().layout().decode(id(out)).worker()).isEqualTo(5);
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void shouldIssueStrictlyIncreasingIdsThroughSequenceOverflow() {
        SnowstampConfig config = config();
        start(config);

        List<Long> ids = pipe(5_000);  // more than 4096 (12 sequence bits) in one frozen millisecond

        assertThat(ids).hasSize(5_000).isSorted().doesNotHaveDuplicates();
        assertThat(config.ids().layout().decode(ids.get(4095))).extracting(DecodedId::wallMillis, DecodedId::sequence)
                .containsExactly(T0, 4095L);
        assertThat(config.ids().layout().decode(ids.get(4096))).extracting(DecodedId::wallMillis, DecodedId::sequence)
                .containsExactly(T0 + 1, 0L);
    }

    @Test
    void shouldFollowTheClockWhileItAdvances() {
        SnowstampConfig config = config();
        start(config);

        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clock.addAndGet(250);
            ids.addAll(pipe(2));
        }

        assertThat(ids).extracting(id -> config.ids().layout().decode(id).wallMillis())
                .containsExactly(T0 + 250, T0 + 250, T0 + 500, T0 + 500, T0 + 750, T0 + 750);
        assertThat(ids).extracting(id -> config.ids().layout().decode(id).sequence()).containsExactly(0L, 1L, 0L, 1L, 0L, 1L);
    }

    @Test
    void shouldKeepIdsIncreasingWhenTheClockGoesBackAnHour() {
        SnowstampConfig config = config();
        start(config);
        List<Long> before = pipe(3);

        clock.addAndGet(-HOUR);
        List<Long> after = pipe(3);

        List<Long> all = new ArrayList<>(before);
        all.addAll(after);
        assertThat(all).hasSize(6).isSorted().doesNotHaveDuplicates();
        assertThat(after.get(0)).isGreaterThan(before.get(2));
        assertThat(after).allSatisfy(id -> assertThat(config.ids().layout().decode(id).wallMillis()).isEqualTo(T0));
    }

    // ---- JSON mode and the dead-letter topic

    @Test
    void shouldInjectTheIdIntoJsonObjects() throws IOException {
        start(config(Keys.STAMP_JSON_FIELD, "snowId"));

        input.pipeInput(bytes("k"), bytes("{\"a\":1,\n \"b\":[true]}"));

        TestRecord<byte[], byte[]> out = output.readRecord();
        long id = id(out);
        assertThat(new String(out.value(), UTF_8)).isEqualTo("{\"snowId\":" + id + ",\"a\":1,\n \"b\":[true]}");
        JsonNode node = JSON.readTree(out.value());
        assertThat(node.get("snowId").asLong()).isEqualTo(id);
    }

    @Test
    void shouldInjectTheIdAsAStringWhenConfigured() {
        start(config(Keys.STAMP_JSON_FIELD, "id", Keys.STAMP_JSON_TYPE, "string"));

        input.pipeInput(bytes("k"), bytes("{}"));

        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(new String(out.value(), UTF_8)).isEqualTo("{\"id\":\"" + id(out) + "\"}");
    }

    @Test
    void shouldSendANonObjectUnchangedToTheDeadLetterTopicAndContinue() {
        SnowstampConfig config = config(Keys.STAMP_JSON_FIELD, "id");
        start(config);
        byte[] badKey = {9, 8, 7};
        byte[] badValue = bytes("[1, 2, 3]");

        input.pipeInput(bytes("first"), bytes("{\"n\":1}"));
        input.pipeInput(new TestRecord<>(badKey, badValue, new RecordHeaders().add("trace", bytes("t-1")), T0 - 5));
        input.pipeInput(bytes("third"), bytes("{\"n\":3}"));

        TestRecord<byte[], byte[]> dead = dlq.readRecord();
        assertThat(dlq.isEmpty()).isTrue();
        assertThat(dead.key()).containsExactly(badKey);
        assertThat(dead.value()).containsExactly(badValue);
        assertThat(header(dead, IdHeader.ERROR)).isEqualTo("not-object");
        assertThat(header(dead, "trace")).isEqualTo("t-1");
        assertThat(header(dead, "__streams.errors.exception")).isEqualTo(BadRecordException.class.getName());
        assertThat(header(dead, "__streams.errors.message")).isEqualTo("value is a JSON array, not a JSON object");
        assertThat(header(dead, "__streams.errors.topic")).isEqualTo("events.raw");
        assertThat(header(dead, "__streams.errors.partition")).isEqualTo("0");
        assertThat(header(dead, "__streams.errors.offset")).isEqualTo("1");
        assertThat(dead.headers().headers(IdHeader.ID)).as("no ID was issued for it").isEmpty();

        List<TestRecord<byte[], byte[]>> stamped = output.readRecordsToList();
        assertThat(stamped).extracting(r -> new String(r.key(), UTF_8)).containsExactly("first", "third");
        assertThat(stamped).extracting(r -> header(r, IdHeader.SOURCE)).containsExactly("events.raw/0/0", "events.raw/0/2");
        // the bad record consumed no ID: the two good ones are consecutive
        assertThat(stamped).extracting(r -> config.ids().layout().decode(id(r)).sequence()).containsExactly(0L, 1L);
    }

    @Test
    void shouldSendEachKindOfBadJsonToTheDeadLetterTopicWithItsCode() {
        start(config(Keys.STAMP_JSON_FIELD, "id"));

        input.pipeInput(bytes("a"), bytes("{\"a\":"));
        input.pipeInput(bytes("b"), bytes("{\"id\":1}"));
        input.pipeInput(bytes("c"), bytes("{\"id\":1,\"id\":2}"));
        input.pipeInput(bytes("d"), bytes("{} {}"));
        input.pipeInput(bytes("e"), bytes("\"text\""));
        input.pipeInput(bytes("f"), (byte[]) null);
        input.pipeInput(bytes("g"), bytes("{\"ok\":true}"));

        assertThat(dlq.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8) + "=" + header(r, IdHeader.ERROR))
                .containsExactly("a=truncated", "b=field-exists", "c=duplicate-key", "d=trailing-content",
                        "e=not-object", "f=not-object");
        assertThat(output.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8)).containsExactly("g");
        assertThat(stats.deadLetters()).isEqualTo(6);
        assertThat(stats.deadLetters(io.snowstamp.BadRecordException.Code.NOT_OBJECT)).as("by reason").isEqualTo(2);
        assertThat(stats.deadLetters(io.snowstamp.BadRecordException.Code.TRUNCATED)).isEqualTo(1);
        assertThat(stats.deadLetters(io.snowstamp.BadRecordException.Code.NOT_JSON)).isZero();
    }

    @Test
    void shouldSendARecordTooLargeForMaxRequestSizeToTheDeadLetterTopicInBothModes() {
        start(config("kafka.max.request.size", "20000"));
        byte[] big = filled(19_900);
        input.pipeInput(bytes("big"), big);
        input.pipeInput(bytes("small"), bytes("ok"));

        List<TestRecord<byte[], byte[]>> dead = dlq.readRecordsToList();
        assertThat(dead).hasSize(1);
        assertThat(header(dead.get(0), IdHeader.ERROR)).isEqualTo("too-large");
        assertThat(dead.get(0).value()).isEqualTo(big);
        assertThat(output.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8)).containsExactly("small");
    }

    /**
     * operations.md: {@code too-large} is a record that "comes within 1 KiB of the producer's max.request.size (key +
     * value + headers) ... in header mode too". At the edge: key and value exactly 1 KiB under it are stamped, a byte more
     * is not; a header counts.
     */
    @Test
    void shouldDeadLetterARecordWithinOneKibOfMaxRequestSizeAndStampOneJustOutsideIt() {
        start(config("kafka.max.request.size", "20000"));
        int fits = 20_000 - 1_024 - 1;                  // the value beside a key of one byte
        input.pipeInput(bytes("a"), filled(fits));
        input.pipeInput(bytes("b"), filled(fits + 1));
        input.pipeInput(new TestRecord<>(bytes("c"), filled(fits - 100),
                new RecordHeaders().add("trace", filled(100))));

        assertThat(output.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8)).containsExactly("a");
        assertThat(dlq.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8) + "=" + header(r, IdHeader.ERROR))
                .containsExactly("b=too-large", "c=too-large");
    }

    /** The same in JSON mode, whose member adds to the value: about 1.1 KiB under the limit is stamped, 0.9 KiB under is not. */
    @Test
    void shouldDeadLetterAJsonRecordWithinOneKibOfMaxRequestSize() {
        start(config("kafka.max.request.size", "20000", Keys.STAMP_JSON_FIELD, "id"));
        input.pipeInput(bytes("a"), jsonOf(20_000 - 1_126 - 1));
        input.pipeInput(bytes("b"), jsonOf(20_000 - 922 - 1));

        assertThat(output.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8)).containsExactly("a");
        assertThat(dlq.readRecordsToList()).extracting(r -> new String(r.key(), UTF_8) + "=" + header(r, IdHeader.ERROR))
                .containsExactly("b=too-large");
    }

    private static byte[] filled(int length) {
        byte[] value = new byte[length];
        java.util.Arrays.fill(value, (byte) 'x');
        return value;
    }

    /** A JSON object of exactly {@code length} bytes. */
    private static byte[] jsonOf(int length) {
        return ("{\"p\":\"" + "x".repeat(length - 8) + "\"}").getBytes(UTF_8);
    }

    @Test
    void shouldApplyTheOnExistingFieldPolicy() {
        start(config(Keys.STAMP_JSON_FIELD, "id", Keys.STAMP_ON_EXISTING_FIELD, "overwrite"));
        input.pipeInput(bytes("k"), bytes("{\"a\":1,\"id\":\"old\"}"));
        TestRecord<byte[], byte[]> overwritten = output.readRecord();
        assertThat(new String(overwritten.value(), UTF_8)).isEqualTo("{\"id\":" + id(overwritten) + ",\"a\":1}");

        restart(config(Keys.STAMP_JSON_FIELD, "id", Keys.STAMP_ON_EXISTING_FIELD, "keep"));
        input.pipeInput(bytes("k"), bytes("{\"a\":1,\"id\":\"old\"}"));
        TestRecord<byte[], byte[]> kept = output.readRecord();
        assertThat(new String(kept.value(), UTF_8)).isEqualTo("{\"a\":1,\"id\":\"old\"}");
        assertThat(id(kept)).as("still stamped in the header").isGreaterThan(id(overwritten));
        assertThat(dlq.isEmpty()).isTrue();
    }

    // ---- worker state, restart and layout changes

    @Test
    void shouldTakeTheLeaseAtStartAndReserveNothingBeforeTheLeaseIsConfirmed() {
        SnowstampConfig config = config();

        start(config);

        // a reservation written before the lease record is in the log could land before it: the lease record (its own
        // producer) would then be the newest value, with a lower reservedUntil
        IdLayout layout = config.ids().layout();
        assertThat(storedState()).isEqualTo(new WorkerState(layout.fingerprint(), 5, 1, holder(), T0, T0, -1, -1, T0));
        assertThat(storedState().holder()).as("instance id, a nonce of this process, the stream thread")
                .matches(INSTANCE + "#[0-9a-f]{8}/" + Thread.currentThread().getName());
    }

    private static String holder() {
        return io.snowstamp.lease.Holders.of(INSTANCE);
    }

    @Test
    void shouldRecordTheExactLastIdAtEveryCommitWithoutWaitingForTheHeartbeat() {
        SnowstampConfig config = config();
        start(config);
        clock.addAndGet(10);
        List<Long> first = pipe(3);
        // the test driver commits after every record: each commit carries the last ID issued, written now
        assertThat(storedState().lastId()).isEqualTo(first.get(2));
        assertThat(storedState().writtenAt()).isEqualTo(T0 + 10);

        clock.addAndGet(7);
        List<Long> second = pipe(2);
        assertThat(storedState().lastId()).isEqualTo(second.get(1));
        assertThat(storedState().writtenAt()).isEqualTo(T0 + 17);
    }

    @Test
    void shouldReserveAheadBeforeIssuingAndRecordTheLastIdAtTheHeartbeat() {
        // reservations are what at-least-once rests on; under exactly-once none is written (the next test)
        SnowstampConfig config = config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.RECOVERY_TAKEOVER_GAP, "0");
        start(config);
        clock.addAndGet(10);

        List<Long> ids = pipe(3);

        IdLayout layout = config.ids().layout();
        long reserved = layout.encode(T0 + 10 - IdLayout.DEFAULT_EPOCH_MILLIS + 1_000, 0, 5, layout.maxSequence());
        assertThat(storedState().reservedUntil()).as("id.reservation=1s past the first ID, written before it")
                .isEqualTo(reserved);
        assertThat(ids).allSatisfy(id -> assertThat(id).isLessThanOrEqualTo(reserved));
        assertThat(storedState().highWaterMark()).isGreaterThanOrEqualTo(ids.get(2));

        clock.addAndGet(5_000);
        heartbeat();

        // the driver's writes count as made (as under exactly-once): no renewal, the reservation stays until crossed
        assertThat(storedState()).isEqualTo(new WorkerState(layout.fingerprint(), 5, 1, holder(), T0, T0 + 5_010, ids.get(2),
                reserved, T0 + 5_010));
    }

    @Test
    void shouldWriteOneFarReservationAndNoLastIdForItsCommitsWhereTheOutputTailDecidesAndResumeBelowTheReservation() {
        // exactly-once with the tail guard (the driver's probe reads this driver's output back)
        SnowstampConfig config = config(Keys.RECOVERY_TAIL_GUARD, "true");
        IdLayout layout = config.ids().layout();
        tailProbe = outputTail(layout);
        start(config);
        clock.addAndGet(10);

        List<Long> ids = pipe(3);
        // the test driver commits after every record: one reservation at the first ID, ten times id.reservation ahead (the
        // changelog stays a high-water mark), and no lastId at the commits: a new owner resumes above the committed output
        long reserved = layout.encode(T0 + 10 - IdLayout.DEFAULT_EPOCH_MILLIS + 10 * 1_000, 0, 5, layout.maxSequence());
        WorkerState afterFirst = storedState();
        assertThat(afterFirst.reservedUntil()).isEqualTo(reserved);
        assertThat(afterFirst.lastId()).isEqualTo(-1);
        clock.addAndGet(3_000);
        assertThat(pipe(2)).allSatisfy(id -> assertThat(id).isLessThan(reserved));
        assertThat(storedState()).as("within the reservation, commits write nothing").isEqualTo(afterFirst);

        clock.addAndGet(5_000);
        heartbeat();
        assertThat(storedState().lastId()).as("the heartbeat says what was issued by then").isEqualTo(highestPiped);

        stats.stopping();
        // a clean stop: its commits carry the exact last ID (Kafka Streams commits before it closes the processors; the
        // test driver closes them first, so a record makes the commit here)
        long last = pipe(1).get(0);
        assertThat(storedState().lastId()).isEqualTo(last);

        // a restart resumes above the output tail, not above the far reservation: its IDs do not run 10 s ahead
        restart(config);
        long next = pipe(1).get(0);
        assertThat(next).isGreaterThan(last).isLessThan(reserved);

        // an output tail without the newest IDs (emptied by retention, a recreated topic) decides nothing: the reservation,
        // the changelog's high-water mark, bounds the resume again
        long far = storedState().reservedUntil();
        highestPiped = -1;
        restart(config);
        assertThat(pipe(1).get(0)).isGreaterThan(far);

        // nor does a tail whose newest ID lies below the state's lastId (a recreated output topic holding a few older
        // records, after a crash: lastId only a lower bound, IDs above it maybe in a database already) — design.md
        long farther = storedState().reservedUntil();
        assertThat(storedState().lastId()).isGreaterThan(ids.get(0));
        highestPiped = ids.get(0);
        restart(config);
        assertThat(pipe(1).get(0)).as("above the reservation, not the tail or lastId").isGreaterThan(farther);
    }

    @Test
    void shouldNameTheLastIdInTheOutputAfterACleanStopOfTheInstanceThePartitionMovedTo() throws Exception {
        // exactly-once with the tail guard; instance A issues, then loses the partition in a rebalance (scale-out: A keeps
        // running, so its revocation commit writes no exact lastId), instance B takes it over and gets no more input
        SnowstampConfig config = config(Keys.RECOVERY_TAIL_GUARD, "true");
        tailProbe = outputTail(config.ids().layout());
        start(config);
        clock.addAndGet(10);
        pipe(3);
        clock.addAndGet(5_000);
        heartbeat();                // A's heartbeat: lastId exact as of now
        long atHeartbeat = storedState().lastId();
        assertThat(atHeartbeat).isEqualTo(highestPiped);
        clock.addAndGet(1_000);
        pipe(2);                    // two more IDs, committed (the driver commits after each record) without lastId
        long lastInOutput = highestPiped;
        drivers.stop(driver);       // A's task closes (revoked), A does not stop

        start(config);              // B's task: new lease, resumes above the committed output tail
        clock.addAndGet(20_000);
        for (int i = 0; i < 4; i++) {
            driver.advanceWallClockTime(Duration.ofSeconds(5));     // heartbeats
        }
        stats.stopping();           // B stops cleanly
        driver.advanceWallClockTime(Duration.ofSeconds(1));
        assertThat(stats.awaitLastIds(Duration.ZERO)).isZero();
        assertThat(storedState().lastId()).as("the output's last ID after a clean stop").isEqualTo(lastInOutput);
    }

    /** A tail probe that finds the highest ID the test piped out so far, as the tail guard finds it in the output. */
    private TailProbe outputTail(IdLayout layout) {
        return (partition, datacenter, worker) -> highestPiped < 0 ? TailProbe.Result.NONE
                : new TailProbe.Result(highestPiped, 1, 0, 1, 0);
    }

    @Test
    void shouldCoverEveryIdInTheStateWithoutReservation() {
        start(config(Keys.PROCESSING_GUARANTEE, "at_least_once", Keys.ID_RESERVATION, "0"));

        for (int i = 0; i < 5; i++) {
            long id = pipe(1).get(0);
            assertThat(storedState().reservedUntil()).isEqualTo(id);
            assertThat(storedState().highWaterMark()).isEqualTo(id);
        }
    }

    @Test
    void shouldWriteTheWorkerStateToItsChangelog() {
        SnowstampConfig config = config();
        start(config);
        List<Long> ids = pipe(2);
        heartbeat();

        List<TestRecord<Integer, WorkerState>> changelog = driver.createOutputTopic(Names.changelogTopic("snowstamp"),
                new IntegerDeserializer(), new WorkerStateSerde()).readRecordsToList();

        assertThat(Names.changelogTopic("snowstamp")).isEqualTo("snowstamp-worker-state-changelog");
        assertThat(changelog).isNotEmpty().allSatisfy(r -> assertThat(r.key()).isZero());
        assertThat(changelog).extracting(TestRecord::value).doesNotContainNull();
        assertThat(changelog.get(changelog.size() - 1).value()).isEqualTo(storedState());
        assertThat(changelog.get(changelog.size() - 1).value().lastId()).isEqualTo(ids.get(1));
    }

    @ParameterizedTest(name = "{0}, id.reservation={1}, heartbeat before restart: {2}")
    @CsvSource({
            "exactly_once_v2, 1s, true",
            "exactly_once_v2, 1s, false",
            "exactly_once_v2, 0, false",
            "at_least_once, 1s, false",
            "at_least_once, 0, true",
    })
    void shouldResumeAboveTheLastIdAfterARestartWithTheClockAnHourBehind(String guarantee, String reservation,
                                                                         boolean heartbeatBeforeRestart) {
        SnowstampConfig config = config(Keys.PROCESSING_GUARANTEE, guarantee, Keys.ID_RESERVATION, reservation);
        start(config);
        List<Long> firstRun = pipe(10);
        long lastOfFirstRun = firstRun.get(9);
        if (heartbeatBeforeRestart) {
            heartbeat();
            assertThat(storedState().lastId()).isEqualTo(lastOfFirstRun);
        }
        WorkerState beforeRestart = storedState();
        assertThat(beforeRestart.epoch()).isEqualTo(1);
        assertThat(beforeRestart.highWaterMark()).isGreaterThanOrEqualTo(lastOfFirstRun);

        clock.set(T0 - HOUR);
        restart(config);
        assertThat(storedState()).as("a new lease, taken before any record, keeping the high-water mark")
                .isEqualTo(beforeRestart.withNewLease(holder(), T0 - HOUR).withWrittenAt(T0 - HOUR));
        List<Long> secondRun = pipe(3);

        assertThat(secondRun.get(0)).isGreaterThan(lastOfFirstRun).isGreaterThan(beforeRestart.highWaterMark());
        assertThat(secondRun).isSorted().doesNotHaveDuplicates();
        assertThat(config.ids().layout().decode(secondRun.get(0)).worker()).isEqualTo(5);
        assertThat(storedState().epoch()).isEqualTo(2);
        assertThat(storedState().highWaterMark()).isGreaterThanOrEqualTo(secondRun.get(2));
    }

    @Test
    void shouldResumeAboveTheHighestIdFoundInTheOutputTail() {
        SnowstampConfig config = config();
        IdLayout layout = config.ids().layout();
        long inTheQueue = layout.encode(T0 - IdLayout.DEFAULT_EPOCH_MILLIS + 60_000, 0, 5, 7);
        List<String> probed = new ArrayList<>();
        tailProbe = (partition, datacenter, worker) -> {
            probed.add(partition + "/" + datacenter + "/" + worker);
            return new TailProbe.Result(inTheQueue, 3, 10, 13, 1);
        };

        start(config);
        long first = pipe(1).get(0);

        assertThat(probed).containsExactly("0/0/5");
        assertThat(first).isEqualTo(layout.encode(T0 - IdLayout.DEFAULT_EPOCH_MILLIS + 60_000, 0, 5, 8));
    }

    @Test
    void shouldTellTheTailProbeWhenATaskGivesItsPartitionUp() {
        List<Integer> released = new ArrayList<>();
        tailProbe = new TailProbe() {
            @Override
            public Result highestIssued(int partition, long datacenter, long worker) {
                return Result.NONE;
            }

            @Override
            public void released(int partition) {
                released.add(partition);
            }
        };
        start(config());
        pipe(1);
        assertThat(released).isEmpty();

        drivers.stop(driver);       // the task closes: whatever a probe read ahead for partition 0 is void from now on

        assertThat(released).containsExactly(0);
    }

    @Test
    void shouldRefuseToStartWhenTheTailCannotBeRead() {
        tailProbe = (partition, datacenter, worker) -> {
            throw new SnowstampException("output partition 0 tail unreadable in 60 s");
        };

        Throwable thrown = catchThrowable(() -> start(config()));

        assertThat(findCause(thrown, SnowstampException.class)).hasMessage("output partition 0 tail unreadable in 60 s");
    }

    @Test
    void shouldRefuseToStartWhenTheStoredStateHasAnotherLayout() {
        SnowstampConfig snowflake = config();
        start(snowflake);
        pipe(1);
        drivers.stop(driver);
        SnowstampConfig sonyflake = config(Keys.ID_PRESET, "sonyflake");

        Throwable thrown = catchThrowable(() -> start(sonyflake));

        assertThat(thrown).isNotNull();
        LayoutChangedException cause = findCause(thrown, LayoutChangedException.class);
        assertThat(cause.stored()).isEqualTo("t41.d0.w10.s12.u1ms.e1577836800000.mid");
        assertThat(cause.configured()).isEqualTo("t39.d0.w16.s8.u10ms.e1577836800000.low");
        assertThat(cause).hasMessageContaining("partition 0")
                .hasMessageContaining(snowflake.ids().layout().fingerprint())
                .hasMessageContaining(sonyflake.ids().layout().fingerprint());
    }

    @Test
    void shouldRefuseToStartWhenTheWorkerOffsetChanged() {
        start(config());
        pipe(1);
        drivers.stop(driver);

        Throwable thrown = catchThrowable(() -> start(config(Keys.ID_WORKER_OFFSET, "6")));

        ConfigException cause = findCause(thrown, ConfigException.class);
        assertThat(cause).hasMessageStartingWith("id.worker-offset=6 is invalid: accepted the offset the state of partition 0"
                + " was written with (worker 5, now 6)");
    }

    // ---- excess lead and takeover gap

    @Test
    void shouldWarnOnceAMinuteWhileIdsRunAheadOfTheClockUnderTheContinuePolicy() {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(LeadWatch.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> warnings = new ch.qos.logback.core.read.ListAppender<>();
        warnings.start();
        logger.addAppender(warnings);
        try {
            start(config(Keys.ID_MAX_LEAD, "10s"));
            long before = pipe(3).get(2);
            clock.addAndGet(-HOUR);

            List<Long> ahead = pipe(5);
            clock.addAndGet(30_000);
            ahead = new ArrayList<>(ahead);
            ahead.addAll(pipe(5));
            clock.addAndGet(31_000);
            ahead.addAll(pipe(1));

            assertThat(ahead.get(0)).isGreaterThan(before);
            assertThat(ahead).isSorted().doesNotHaveDuplicates();
            List<String> lines = warnings.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                    .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
            assertThat(lines).as("one warning, then the next after a minute of the task's clock").hasSize(2);
            assertThat(lines.get(0)).contains("partition 0 worker 5: IDs run", "ahead of the wall clock (id.max-lead=10000 ms; 1 IDs");
            assertThat(lines.get(1)).contains("11 IDs past it so far");
        } finally {
            logger.detachAppender(warnings);
        }
    }

    /**
     * operations.md, Metrics and Logs: the per-partition counters keep counting across a task restart in the same process,
     * {@code snowstamp_lease_epoch} shows the running task's epoch, and the wall clock falling behind the IDs and catching
     * up are one line each (issue 41).
     */
    @Test
    void shouldKeepCountingAcrossATaskRestartShowTheNewEpochAndLogTheClockBehindAndCaughtUp() throws Exception {
        SnowstampConfig config = config();
        var lines = io.snowstamp.testing.Logback.capture(LeadWatch.class, () -> {
            start(config);
            pipe(3);
            assertThat(stats.tasks().get(0).epoch()).as("the first task's lease").isEqualTo(1);
            clock.addAndGet(-HOUR);
            pipe(2);        // issued above the last ID, an hour ahead of the clock
            drivers.stop(driver);
            startKeepingStats(config);
            pipe(4);
            assertThat(stats.tasks().get(0).epoch()).as("the running task's lease, after the restart").isEqualTo(2)
                    .isEqualTo(storedState().epoch());
            StamperStats.Totals behind = stats.totals().get(0);
            clock.addAndGet(2 * HOUR);
            pipe(1);
            StamperStats.Totals all = stats.totals().get(0);

            assertThat(all.issued()).as("the IDs of both tasks").isEqualTo(10);
            assertThat(behind.clockBehindEvents()).as("IDs issued while behind, in both tasks").isEqualTo(6);
            assertThat(all.clockBehindEvents()).as("none once caught up").isEqualTo(6);
        });
        // one of each per task: the restarted task finds the clock behind again (the excess-lead WARNs are another promise)
        List<ch.qos.logback.classic.spi.ILoggingEvent> clockLines = lines.stream()
                .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.INFO).toList();
        assertThat(clockLines).extracting(e -> String.valueOf(e.getKeyValuePairs().get(0).value)).as("the lines' events")
                .containsExactly("clock-behind", "clock-behind", "clock-caught-up");
        assertThat(clockLines.get(0).getFormattedMessage()).startsWith("partition 0 worker 5: the wall clock is ")
                .contains("ms behind the last ID");
        assertThat(clockLines.get(2).getFormattedMessage()).isEqualTo("partition 0 worker 5: the wall clock caught up with the IDs");
    }

    @Test
    void shouldHoldRecordsBackUntilTheClockCatchesUpUnderThePausePolicy() {
        SnowstampConfig config = config(Keys.ID_ON_EXCESS_LEAD, "pause", Keys.ID_MAX_LEAD, "10s");
        start(config);
        long before = pipe(2).get(1);
        clock.addAndGet(-HOUR);

        List<Long> held = pipe(4);
        assertThat(held).as("nothing is stamped while the IDs would run an hour ahead").isEmpty();
        KeyValueStore<Long, ?> pending = driver.getKeyValueStore(Names.PENDING_STORE);
        assertThat(pending.approximateNumEntries()).isEqualTo(4);

        clock.addAndGet(HOUR - 5_000);          // within id.max-lead of the last ID again
        driver.advanceWallClockTime(Duration.ofMillis(100));

        List<TestRecord<byte[], byte[]>> released = output.readRecordsToList();
        assertThat(released).hasSize(4);
        assertThat(released).extracting(r -> header(r, IdHeader.SOURCE))
                .as("arrival order and provenance kept").containsExactly("events.raw/0/2", "events.raw/0/3", "events.raw/0/4", "events.raw/0/5");
        assertThat(released).extracting(StampTopologyTest::id).isSorted().allSatisfy(id -> assertThat(id).isGreaterThan(before));
        assertThat(pending.approximateNumEntries()).isZero();
        assertThat(pipe(1)).as("stamping continues directly once the clock caught up").hasSize(1);
    }

    /**
     * Under at-least-once the store entry of a record set aside and stamped goes only once a commit after its stamping
     * flushed the producer (the driver commits after every punctuation): a delete acknowledged before the output record
     * would lose the record at a crash. Under exactly-once the delete joins the output's transaction: at once.
     */
    @ParameterizedTest
    @ValueSource(strings = {"at_least_once", "exactly_once_v2"})
    void shouldDeleteARecordSetAsideOnlyOnceACommitPassedAfterItsStampingUnderAtLeastOnce(String guarantee) {
        start(config(Keys.PROCESSING_GUARANTEE, guarantee, Keys.ID_ON_EXCESS_LEAD, "pause", Keys.ID_MAX_LEAD, "10s"));
        pipe(2);
        clock.addAndGet(-HOUR);
        assertThat(pipe(3)).isEmpty();
        assertThat(pendingKeys()).as("set aside").containsExactly(0L, 1L, 2L);

        clock.addAndGet(HOUR - 5_000);
        driver.advanceWallClockTime(Duration.ofMillis(100));          // the drain stamps all three, then the driver commits

        assertThat(output.readRecordsToList()).hasSize(3);
        assertThat(stats.tasks().get(0).heldBack()).as("none waits").isZero();
        boolean atLeastOnce = guarantee.equals("at_least_once");
        assertThat(pendingKeys()).as("stamped; deleted only after a commit that followed the stamping")
                .isEqualTo(atLeastOnce ? List.of(0L, 1L, 2L) : List.of());

        driver.advanceWallClockTime(Duration.ofMillis(10));           // the drain after that commit
        assertThat(pendingKeys()).as("deleted after the commit").isEmpty();
        assertThat(output.readRecordsToList()).as("none stamped again").isEmpty();
        assertThat(pipe(1)).as("stamping goes on directly").hasSize(1);
    }

    private List<Long> pendingKeys() {
        return SetAsideTest.keys(driver.<Long, Object>getKeyValueStore(Names.PENDING_STORE));
    }

    @Test
    void shouldKeepHeldRecordsAcrossARestart() {
        SnowstampConfig config = config(Keys.ID_ON_EXCESS_LEAD, "pause", Keys.ID_MAX_LEAD, "10s");
        start(config);
        long before = pipe(1).get(0);
        clock.addAndGet(-HOUR);
        assertThat(pipe(3)).isEmpty();

        restart(config);
        assertThat(pipe(1)).as("new records queue behind the held ones").isEmpty();
        clock.addAndGet(HOUR);
        driver.advanceWallClockTime(Duration.ofMillis(100));

        List<TestRecord<byte[], byte[]>> released = output.readRecordsToList();
        // a new driver numbers its input from offset 0 again: the last record is the one piped after the restart
        assertThat(released).extracting(r -> header(r, IdHeader.SOURCE))
                .containsExactly("events.raw/0/1", "events.raw/0/2", "events.raw/0/3", "events.raw/0/0");
        assertThat(released).extracting(StampTopologyTest::id).isSorted().allSatisfy(id -> assertThat(id).isGreaterThan(before));
    }

    @Test
    void shouldAddTheTakeoverGapAtEveryStart() {
        SnowstampConfig config = config(Keys.PROCESSING_GUARANTEE, "at_least_once");
        assertThat(config.recovery().takeoverGap()).isEqualTo(Duration.ofSeconds(1));
        start(config);

        long first = pipe(1).get(0);
        assertThat(config.ids().layout().decode(first).wallMillis()).as("gap above the clock at the first start").isEqualTo(T0 + 1_001);

        restart(config);
        long afterRestart = pipe(1).get(0);
        assertThat(config.ids().layout().decode(afterRestart).wallMillis())
                .as("gap above the restored reservation (1 s past the last ID)").isEqualTo(T0 + 1_001 + 1_000 + 1_000 + 1);
    }

    // ---- records refused, or whose lookup failed, on their way out of the records set aside

    /**
     * Values {@code "schema N ..."} need a lookup of schema N first; {@link #answer} completes the lookups. A value with
     * {@code bad} in it is refused once its schema is known.
     */
    private static final class LookedUpValues implements ValueField {
        final java.util.Set<String> known = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final java.util.concurrent.CompletableFuture<Void> answer = new java.util.concurrent.CompletableFuture<>();
        final java.util.concurrent.atomic.AtomicInteger lookups = new java.util.concurrent.atomic.AtomicInteger();

        private static String schema(byte[] value) {
            return new String(value, UTF_8).split(" ")[1];
        }

        @Override
        public Object inspect(byte[] value) {
            if (new String(value, UTF_8).contains("bad")) {
                throw new BadRecordException(BadRecordException.Code.NOT_OBJECT, "refused by its schema");
            }
            return value;
        }

        @Override
        public Object inspectNow(byte[] value) {
            return known.contains(schema(value)) ? inspect(value) : LOOKUP;
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> lookup(byte[] value) {
            lookups.incrementAndGet();
            return answer.thenRun(() -> known.add(schema(value)));
        }

        @Override
        public byte[] write(byte[] value, Object plan, long id, byte[] digits) {
            return value;
        }

        @Override
        public int maxGrowth() {
            return 0;
        }
    }

    /** The test's clock of the lease ({@code nanos}). */
    private final long[] leaseNanos = {0};
    private io.snowstamp.lease.PartitionLease heldLease;
    private io.snowstamp.lease.LeaseMark heldMark;

    /** Leases that wait out their takeover until {@link #permitLease}. */
    private io.snowstamp.lease.Leases heldLeases() {
        io.snowstamp.lease.Ticker ticker = new io.snowstamp.lease.Ticker() {
            @Override
            public long nanoTime() {
                return leaseNanos[0];
            }

            @Override
            public void park(long wait) {
                leaseNanos[0] += wait;
            }
        };
        return (task, changelog, mine, key, value, name, restoreAgain) -> {
            heldMark = mine;
            heldLease = new io.snowstamp.lease.PartitionLease(task.partition(), mine, 0,
                    io.snowstamp.lease.LeaseRounds.TERM_NANOS, io.snowstamp.lease.LeaseRounds.TAKEOVER_WAIT_NANOS);
            return io.snowstamp.lease.LeaseGuard.of(heldLease, task, name, ticker);
        };
    }

    /** The lease's own record is read back and its takeover wait is over (a second later). */
    private void permitLease() {
        io.snowstamp.lease.LeaseRounds.observe(heldLease, 0, heldMark, -1);
        io.snowstamp.lease.LeaseRounds.confirmed(heldLease, leaseNanos[0], leaseNanos[0] + 1);
        leaseNanos[0] += io.snowstamp.lease.LeaseRounds.TAKEOVER_WAIT_NANOS + 10;
        io.snowstamp.lease.LeaseRounds.confirmed(heldLease, leaseNanos[0], leaseNanos[0] + 1);
        leaseNanos[0] += 2;
    }

    @Test
    void shouldCountTheWaitOfARecordRefusedOnItsWayOutOfTheRecordsSetAside() {
        leases = heldLeases();
        LookedUpValues looked = new LookedUpValues();
        values = looked;
        start(config());

        input.pipeInput(bytes("k"), bytes("schema 1 bad"));
        looked.answer.complete(null);
        driver.advanceWallClockTime(Duration.ofMillis(10));     // looked up; its ID would wait for the takeover
        assertThat(dlq.isEmpty()).isTrue();
        permitLease();
        driver.advanceWallClockTime(Duration.ofMillis(10));

        assertThat(dlq.readRecordsToList()).as("refused on its way out").hasSize(1);
        assertThat(stats.leaseWaits()).as("the takeover wait it ended is counted, and over").isEqualTo(1);
    }

    @Test
    void shouldShowAWaitInProgressWhileNeitherWaitCounterMoves() {
        leases = heldLeases();
        start(config());

        input.pipeInput(bytes("k"), bytes("{}"));
        driver.advanceWallClockTime(Duration.ofMillis(10));     // its ID waits for the takeover, the record set aside
        TaskStats task = stats.tasks().get(0);
        long began = clock.get();
        clock.addAndGet(90_000);
        driver.advanceWallClockTime(Duration.ofMillis(10));
        assertThat(output.isEmpty()).isTrue();
        assertThat(stats.leaseWaits() + stats.reservationWaits()).as("a wait is counted only once it ends").isZero();
        assertThat(task.millisWaiting(clock.get())).as("the wait in progress, 90 s old").isEqualTo(clock.get() - began);

        permitLease();
        driver.advanceWallClockTime(Duration.ofMillis(10));
        assertThat(output.readRecordsToList()).hasSize(1);
        assertThat(stats.leaseWaits()).isEqualTo(1);
        assertThat(task.millisWaiting(clock.get())).as("over").isZero();
    }

    @Test
    void shouldGiveUpASetAsideWaitForALeaseConfirmationAfterTwentySecondsAndNotBefore() {
        leases = heldLeases();
        start(config());
        permitLease();
        assertThat(pipe(1)).as("confirmed: stamped at once").hasSize(1);

        // confirmations stop: past the term, the next ID waits for one, and its record is set aside from here
        leaseNanos[0] += io.snowstamp.lease.LeaseRounds.TERM_NANOS;
        long waitingSince = leaseNanos[0];
        assertThat(pipe(1)).as("set aside").isEmpty();
        // the 10 ms drain passes ask again and again: each counts from the first, not from its own pass
        for (long millis = 1_000; millis < 20_000; millis += 1_000) {
            leaseNanos[0] = waitingSince + Duration.ofMillis(millis).toNanos();
            driver.advanceWallClockTime(Duration.ofMillis(10));
        }
        leaseNanos[0] = waitingSince + Duration.ofMillis(19_900).toNanos();
        driver.advanceWallClockTime(Duration.ofMillis(10));
        assertThat(output.isEmpty()).as("19.9 s: still set aside, the task still runs").isTrue();

        leaseNanos[0] = waitingSince + Duration.ofSeconds(20).toNanos();
        Throwable gaveUp = catchThrowable(() -> driver.advanceWallClockTime(Duration.ofMillis(10)));

        assertThat(findCause(gaveUp, org.apache.kafka.streams.errors.TaskMigratedException.class))
                .as("20 s after the wait began, the task gives its partition back").hasMessageContaining("not confirmed");
        assertThat(output.isEmpty()).as("nothing stamped without a confirmation").isTrue();
    }

    @Test
    void shouldNameTheInputOffsetOfARecordRefusedOnItsWayOutOfTheRecordsSetAsideWithoutProvenance() {
        LookedUpValues looked = new LookedUpValues();
        values = looked;
        start(config(Keys.STAMP_PROVENANCE, "false"));

        input.pipeInput(bytes("k0"), bytes("schema 1 good"));
        input.pipeInput(new TestRecord<>(bytes("k1"), bytes("schema 1 bad"), new RecordHeaders().add("trace", bytes("t-1")), T0));
        looked.answer.complete(null);
        driver.advanceWallClockTime(Duration.ofMillis(10));

        TestRecord<byte[], byte[]> dead = dlq.readRecord();
        assertThat(header(dead, "__streams.errors.offset")).isEqualTo("1");
        assertThat(dead.headers().toArray()).extracting(Header::key).as("nothing of the store's on it")
                .filteredOn(key -> !key.startsWith("__streams.errors.")).containsExactly("trace", IdHeader.ERROR);
        TestRecord<byte[], byte[]> out = output.readRecord();
        assertThat(out.headers().toArray()).extracting(Header::key).as("the record set aside leaves as the others do")
                .containsExactly(IdHeader.ID);
    }

    @Test
    void shouldStopRatherThanLookUpAgainAndAgainWhenALookupFails() {
        LookedUpValues looked = new LookedUpValues();
        values = looked;
        start(config());

        input.pipeInput(bytes("k0"), bytes("schema 1 good"));
        looked.answer.completeExceptionally(new ConfigException(Keys.SCHEMA_REGISTRY_URL, "http://registry", "credentials it accepts"));
        Throwable failed = catchThrowable(() -> {
            for (int i = 0; i < 10; i++) {
                driver.advanceWallClockTime(Duration.ofMillis(10));
            }
        });

        assertThat(findCause(failed, ConfigException.class)).hasMessageContaining("credentials it accepts");
        assertThat(looked.lookups).as("one lookup, not one every 10 ms").hasValue(1);
        KeyValueStore<Long, ?> pending = driver.getKeyValueStore(Names.PENDING_STORE);
        assertThat(pending.approximateNumEntries()).as("the record stays set aside").isEqualTo(1);
    }

    private static <T extends Throwable> T findCause(Throwable thrown, Class<T> type) {
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " in the cause chain of " + thrown, thrown);
    }
}
