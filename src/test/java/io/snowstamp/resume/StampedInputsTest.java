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
        StampedInputs.Window window = new StampedInputs.Window("events.raw", 3);
        for (long offset = 95; offset < 103; offset++) {
            window.note(text("events.raw/3/" + offset));
        }
        List<Long> reads = new ArrayList<>();
        StampedInputs known = StampedInputs.of(window, 100, from -> {
            reads.add(from);
            return StampedInputs.NONE;
        });
        assertThat(reads).as("the window saw input 95, below the committed offset 100: nothing older was missed").isEmpty();
        assertThat(known.complete()).isTrue();
        assertThat(known.count()).isEqualTo(3);
        assertThat(known.contains(99)).isFalse();
        assertThat(known.contains(100)).isTrue();
        assertThat(known.contains(102)).isTrue();
        assertThat(known.contains(103)).isFalse();
        assertThat(known.highest()).isEqualTo(102);

        StampedInputs.of(window, 90, from -> {
            reads.add(from);
            return StampedInputs.NONE;
        });
        assertThat(reads).as("nothing below 90 in the window: inputs 90..94 may be further back").containsExactly(90L);
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
            if (stampedCopy(input) && input < FIRST_INPUT + 3_000 && !found.contains(input)) {
                missed.add(input);
            } else if (!(stampedCopy(input) && input < FIRST_INPUT + 3_000) && found.contains(input)) {
                extra.add(input);
            }
        }
        assertThat(missed).as("inputs from the committed offset on that have an output record").isEmpty();
        assertThat(extra).as("inputs without an own output record (foreign provenance names them)").isEmpty();
        assertThat(found.contains(committed - 1)).as("below the committed offset: never asked about").isFalse();
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
        assertThat(found.contains(FIRST_INPUT + records - 1)).isTrue();
        assertThat(found.contains(FIRST_INPUT + records - TailGuard.MAX_STAMPED_INPUTS_READ)).isTrue();
        assertThat(found.contains(FIRST_INPUT + records - TailGuard.MAX_STAMPED_INPUTS_READ - 1)).as("past the cap").isFalse();
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
