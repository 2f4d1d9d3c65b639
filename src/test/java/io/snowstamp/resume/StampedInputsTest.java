package io.snowstamp.resume;

import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.OutputPartitions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StampedInputsTest {
    private static final byte[] PREFIX = "events.raw/3/".getBytes(StandardCharsets.UTF_8);
    private static final String OUTPUT = "events.stamped";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** The input offset whose output record sits at output offset 0 (see {@link #afterForeign}). */
    private static final long FIRST_INPUT = 10_000;
    /** Output offsets whose record comes from another input: e.g. a second stamper writing the same output topic. */
    private static final int FOREIGN_EVERY = 10;

    /**
     * Output partition 3 as a busy at-least-once task leaves it: the record at output offset {@code i} is the copy of
     * input {@code FIRST_INPUT + i}, except every {@value #FOREIGN_EVERY}th, whose provenance names another input
     * partition or topic, with input offsets both far below and far above the task's (so counting them either skips
     * inputs that were never stamped, or stops the read before the ones that were). Own provenance alternates the text
     * and compact formats (a deployment may switch).
     */
    private static ConsumerRecord<byte[], byte[]> afterForeign(long i) {
        if (i % FOREIGN_EVERY == 7) {
            String foreign = switch ((int) (i / FOREIGN_EVERY % 4)) {
                case 0 -> "events.raw/4/" + (FIRST_INPUT + i);
                case 1 -> "events.raw/4/0";
                case 2 -> "other/3/" + (FIRST_INPUT + i);
                default -> "other/3/0";
            };
            return text(foreign);
        }
        long input = FIRST_INPUT + i;
        return i % 2 == 0 ? text("events.raw/3/" + input) : record(IdHeader.COMPACT_SOURCE, IdHeader.binary(input));
    }

    private static boolean stampedCopy(long input) {
        long i = input - FIRST_INPUT;
        return i >= 0 && i % FOREIGN_EVERY != 7;
    }

    private static ConsumerRecord<byte[], byte[]> record(String header, byte[] value) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("events.stamped", 3, 0, null, null);
        if (header != null) {
            record.headers().add(header, value);
        }
        return record;
    }

    private static ConsumerRecord<byte[], byte[]> text(String source) {
        return record(IdHeader.SOURCE, source.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether {@code found} holds the input at {@code offset} as the fakes make them: no timestamp, no key. */
    private static boolean has(StampedInputs found, long offset) {
        return found.contains(offset, ConsumerRecord.NO_TIMESTAMP, null);
    }

    /** An output record at output offset {@code offset} naming input {@code source} of events.raw-3, with its identity. */
    private static ConsumerRecord<byte[], byte[]> output(long offset, long source, long timestamp, TimestampType type, String key) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(OUTPUT, 3, offset, timestamp, type, 0, 0,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8), null, new RecordHeaders(), Optional.empty());
        record.headers().add(IdHeader.SOURCE, ("events.raw/3/" + source).getBytes(StandardCharsets.UTF_8));
        return record;
    }

    /** The window of output offsets {@code 0..count-1}, holding inputs 95.. (timestamp 1000 + input, key k + input), but {@code missing}. */
    private static StampedInputs.Window window(int count, long stableEnd, long... missing) {
        StampedInputs.Window window = new StampedInputs.Window("events.raw", 3);
        for (int i = 0; i < count; i++) {
            long offset = i;
            if (java.util.Arrays.stream(missing).noneMatch(m -> m == offset)) {
                window.note(output(offset, 95 + offset, 1000 + 95 + offset, TimestampType.CREATE_TIME, "k" + (95 + offset)));
            }
        }
        window.readRange(0, count, stableEnd);
        return window;
    }

    @Test
    void shouldReadTheInputOffsetFromEitherProvenanceFormatOfThisInputPartitionOnly() {
        assertThat(StampedInputs.sourceOffset(text("events.raw/3/1234"), PREFIX)).isEqualTo(1234);
        assertThat(StampedInputs.sourceOffset(record(IdHeader.COMPACT_SOURCE, IdHeader.binary(77)), PREFIX)).isEqualTo(77);
        assertThat(StampedInputs.sourceOffset(text("events.raw/31/5"), PREFIX)).as("another partition").isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(text("other/3/5"), PREFIX)).as("another topic").isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(text("events.raw/3/x"), PREFIX)).as("malformed").isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(text("events.raw/3/"), PREFIX)).isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(record(null, null), PREFIX)).as("no provenance").isEqualTo(-1);
    }

    @Test
    void shouldAnswerFromTheStartsWindowWhenItReachesBelowTheFirstInputAndReadOtherwise() {
        List<Long> reads = new ArrayList<>();
        StampedInputs known = StampedInputs.of(window(8, 8), 100, from -> {
            reads.add(from);
            return StampedInputs.NONE;
        });
        assertThat(reads).as("the window saw input 95, below the committed offset 100: nothing older was missed").isEmpty();
        assertThat(known.complete()).isTrue();
        assertThat(known.count()).isEqualTo(3);
        assertThat(known.contains(99, 1099, bytes("k99"))).isFalse();
        assertThat(known.contains(100, 1100, bytes("k100"))).isTrue();
        assertThat(known.contains(102, 1102, bytes("k102"))).isTrue();
        assertThat(known.contains(103, 1103, bytes("k103"))).isFalse();
        assertThat(known.highest()).isEqualTo(102);

        StampedInputs.of(window(8, 8), 90, from -> {
            reads.add(from);
            return StampedInputs.NONE;
        });
        assertThat(reads).as("nothing below 90 in the window: inputs 90..94 may be further back").containsExactly(90L);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The offset alone names no input for good: the input topic deleted and created again starts at 0 under the old
     * incarnation's provenance, and compact provenance names no topic. The input at an offset the output names is found
     * only with the timestamp and key of the record that got there.
     */
    @Test
    void shouldNotFindAnInputWhoseTimestampOrKeyDiffersFromTheOutputRecordNamingItsOffset() {
        StampedInputs known = StampedInputs.of(window(8, 8), 100, from -> null);

        assertThat(known.contains(101, 1101, bytes("k101"))).as("the input that got there").isTrue();
        assertThat(known.contains(101, 5_000, bytes("k101"))).as("another input at offset 101: another time").isFalse();
        assertThat(known.contains(101, 1101, bytes("other"))).as("another input at offset 101: another key").isFalse();
        assertThat(known.contains(101, 1101, null)).as("without a key").isFalse();
    }

    /** Keys whose 32-bit {@code Arrays.hashCode} is the same ("Aa", "BB"; 31 and 256 as four-byte ints) are other inputs. */
    @Test
    void shouldNotTakeAnotherKeyOfTheSame32BitHashForTheInput() {
        StampedInputs.Window window = new StampedInputs.Window("events.raw", 3);
        window.note(output(0, 100, 1100, TimestampType.CREATE_TIME, "k99"));
        window.note(output(1, 101, 1101, TimestampType.CREATE_TIME, "Aa"));
        window.readRange(0, 2, 2);
        StampedInputs known = StampedInputs.of(window, 101, from -> null);

        assertThat(known.contains(101, 1101, bytes("Aa"))).isTrue();
        assertThat(known.contains(101, 1101, bytes("BB"))).as("same Arrays.hashCode, another key").isFalse();
        assertThat(StampedInputs.keyHash(new byte[] {0, 0, 0, 31})).isNotEqualTo(StampedInputs.keyHash(new byte[] {0, 0, 1, 0}));
        assertThat(StampedInputs.keyHash(null)).isNotEqualTo(StampedInputs.keyHash(new byte[0]));
    }

    /** The output topic overwrites timestamps (LogAppendTime): no output record identifies its input, none is found. */
    @Test
    void shouldFindNothingInOutputRecordsCarryingTheBrokersTime() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 4).partition(3, 0, 20, i -> i == 0 ? text("events.raw/3/0")
                : output(i, 100 + i, 1000 + i, TimestampType.LOG_APPEND_TIME, "k" + i));

        StampedInputs found = StampedInputs.read(new PartitionTail(outputs, OUTPUT, TIMEOUT), 3, "events.raw", 100,
                TailGuard.MAX_STAMPED_INPUTS_READ, System.nanoTime() + TIMEOUT.toNanos());

        assertThat(found.count()).isZero();
        assertThat(found.unidentified()).isEqualTo(19);
        assertThat(found.contains(105, 1005, bytes("k5"))).as("the broker's time is not the input's").isFalse();
        assertThat(found.highest()).isEqualTo(-1);
    }

    /**
     * The start's window is read read_uncommitted: it stands in for the read_committed read only where it cannot hold a
     * record of an aborted (or still open) transaction. A marker takes an offset: a gap among or after its records; an
     * open transaction keeps the last stable offset below the end.
     */
    @Test
    void shouldReadItselfWhenTheWindowMayHoldRecordsOfATransactionNotCommitted() {
        StampedInputs known = StampedInputs.of(window(8, 8), 100, from -> null);
        assertThat(known).as("contiguous, nothing open").isNotNull();
        assertThat(known.contains(100, 1100, bytes("k100"))).isTrue();

        StampedInputs.Window[] unusable = {window(8, 8, 6), window(8, 8, 7), window(8, 7), window(8, -1)};
        for (StampedInputs.Window window : unusable) {
            List<Long> reads = new ArrayList<>();
            StampedInputs read = StampedInputs.of(window, 100, from -> {
                reads.add(from);
                return StampedInputs.NONE;
            });
            assertThat(reads).as("a marker among or after its records, or the last stable offset below its end").containsExactly(100L);
            assertThat(read.contains(100, 1100, bytes("k100"))).isFalse();
        }
        assertThat(StampedInputs.of(window(8, 8, 0), 100, from -> null)).as("a marker before the first record: of records before it")
                .isNotNull();
    }

    /**
     * The start of a task under at-least-once whose committed input offset lies 2,500 output records back: the read
     * goes back in windows of 512, then 2,048 records (the first that reaches an input below the committed offset) and
     * finds every input from the committed offset on that has a copy, and no other: none of another partition or topic,
     * none below the committed offset (their outputs lie before it, but the task never stamps them again anyway).
     */
    @Test
    void shouldFindEveryInputStampedFromTheCommittedOffsetOnAndReadNoFurther() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 4).partition(3, 0, 3_000, StampedInputsTest::afterForeign);
        long committed = FIRST_INPUT + 500;

        StampedInputs found = StampedInputs.read(new PartitionTail(outputs, OUTPUT, TIMEOUT), 3, "events.raw", committed,
                TailGuard.MAX_STAMPED_INPUTS_READ, System.nanoTime() + TIMEOUT.toNanos());

        List<Long> missed = new ArrayList<>();
        List<Long> extra = new ArrayList<>();
        for (long input = committed; input < FIRST_INPUT + 3_000 + 10; input++) {
            if (stampedCopy(input) && input < FIRST_INPUT + 3_000 && !has(found, input)) {
                missed.add(input);
            } else if (!(stampedCopy(input) && input < FIRST_INPUT + 3_000) && has(found, input)) {
                extra.add(input);
            }
        }
        assertThat(missed).as("inputs from the committed offset on that have an output record").isEmpty();
        assertThat(extra).as("inputs without an own output record (foreign provenance names them)").isEmpty();
        assertThat(has(found, committed - 1)).as("below the committed offset: never asked about").isFalse();
        assertThat(found.count()).isEqualTo(2_500 - 2_500 / FOREIGN_EVERY);
        assertThat(found.highest()).isEqualTo(FIRST_INPUT + 2_999);
        assertThat(found.complete()).as("the read reached an input below the committed offset").isTrue();
        assertThat(outputs.lowestRead(3)).as("the second window (2,048 records) reached below it: no third")
                .isEqualTo(3_000 - 512 - 2_048);
        assertThat(found.scanned()).isEqualTo(512 + 2_048);
    }

    /**
     * More output since the last commit than the start reads back (about a million records, the documented bound): the
     * read stops at the cap, through the guard's real one, and says it is incomplete (the task then logs that older
     * copies may remain) rather than calling what it saw everything.
     */
    @Test
    void shouldStopAtTheCapOfRecordsAndCallTheReadIncomplete() {
        long records = TailGuard.MAX_STAMPED_INPUTS_READ + 10_000;
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 4)
                .partition(3, 0, records, i -> text("events.raw/3/" + (FIRST_INPUT + i)));
        TailGuard guard = new TailGuard(new PartitionTail(outputs, OUTPUT, TIMEOUT), null, TIMEOUT, "events.raw");

        StampedInputs found = guard.stampedInputs(3, "events.raw", FIRST_INPUT);

        assertThat(found.complete()).as("no input below the committed offset was reached, nor the beginning").isFalse();
        assertThat(found.scanned()).isEqualTo(TailGuard.MAX_STAMPED_INPUTS_READ);
        assertThat(outputs.lowestRead(3)).isEqualTo(records - TailGuard.MAX_STAMPED_INPUTS_READ);
        assertThat(has(found, FIRST_INPUT + records - 1)).isTrue();
        assertThat(has(found, FIRST_INPUT + records - TailGuard.MAX_STAMPED_INPUTS_READ)).isTrue();
        assertThat(has(found, FIRST_INPUT + records - TailGuard.MAX_STAMPED_INPUTS_READ - 1)).as("past the cap").isFalse();
    }

    /** A read the deadline cuts short fails: a partial set would let the task stamp again inputs that have a copy. */
    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)  // a read without a deadline fails here instead of hanging
    void shouldFailRatherThanAnswerWhenTheOutputIsNotReadInTime() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 4).partition(3, 0, 3_000, StampedInputsTest::afterForeign)
                .stallAt(3, 2_800);     // the newest window's first 312 records come, then nothing

        assertThatThrownBy(() -> StampedInputs.read(new PartitionTail(outputs, OUTPUT, TIMEOUT), 3, "events.raw", FIRST_INPUT + 500,
                TailGuard.MAX_STAMPED_INPUTS_READ, System.nanoTime() + Duration.ofMillis(300).toNanos()))
                .isInstanceOf(org.apache.kafka.common.errors.TimeoutException.class)
                .hasMessageContaining("not read to their end");
        assertThat(outputs.served()).as("the fake did hand out part of the window").isEqualTo(312);
    }
}
