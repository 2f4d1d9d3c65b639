package io.snowstamp.verify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class VerifierTest {

    private static final String OUT = "events.stamped";
    private static final String RAW = "events.raw";

    private final Verifier verifier = new Verifier(OUT, RAW);

    /** An output record stamped with {@code id} from {@code events.raw/partition/srcOffset}. */
    private void stamped(int partition, long offset, long id, long srcOffset) {
        verifier.output(partition, offset, Long.toString(id), RAW + "/" + partition + "/" + srcOffset);
    }

    private void sources(int partition, long... offsets) {
        for (long offset : offsets) {
            verifier.source(partition, offset);
        }
    }

    @Test
    void shouldReportAllZerosForCleanTopic() {
        stamped(0, 0, 100, 0);
        stamped(0, 1, 101, 1);
        stamped(1, 0, 102, 0);
        stamped(2, 0, 99, 0);
        stamped(2, 1, 200, 1);
        sources(0, 0, 1);
        sources(1, 0);
        sources(2, 0, 1);

        VerifyReport report = verifier.finish();

        assertThat(report).isEqualTo(new VerifyReport(5, 0, 0, 0, 0, 0, 5, List.of()));
        assertThat(report.clean()).isTrue();
        assertThat(report.summaryLine()).isEqualTo("records=5 duplicates=0 missing=0 extra=0");
    }

    @Test
    void shouldReportZerosForEmptyTopic() {
        VerifyReport report = new Verifier(null).finish();

        assertThat(report).isEqualTo(new VerifyReport(0, 0, 0, 0, 0, 0, 0, List.of()));
        assertThat(report.summaryLine()).isEqualTo("records=0 duplicates=0 missing=0 extra=0");
    }

    @Test
    void shouldCountEachCopyOfAnIdWithinAPartitionAfterTheFirst() {
        stamped(0, 0, 1, 0);
        stamped(0, 1, 2, 1);
        stamped(0, 2, 2, 2);
        stamped(0, 3, 2, 3);
        stamped(0, 4, 3, 4);
        sources(0, 0, 1, 2, 3, 4);

        VerifyReport report = verifier.finish();

        assertThat(report.duplicates()).isEqualTo(2);
        assertThat(report.decreases()).isEqualTo(2);
        assertThat(report.clean()).isFalse();
        assertThat(report.summaryLine()).isEqualTo("records=5 duplicates=2 missing=0 extra=0");
        assertThat(report.problems()).contains(
                "duplicate id 2 3 times: events.stamped-0@1, @2, @3");
    }

    @Test
    void shouldCountDuplicatesAcrossPartitionsWhoseIdsEachIncrease() {
        stamped(0, 0, 10, 0);
        stamped(0, 1, 20, 1);
        stamped(0, 2, 30, 2);
        stamped(1, 0, 20, 0);
        stamped(1, 1, 30, 1);
        stamped(1, 2, 40, 2);
        stamped(2, 5, 30, 0);
        sources(0, 0, 1, 2);
        sources(1, 0, 1, 2);
        sources(2, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.duplicates()).isEqualTo(3);
        assertThat(report.decreases()).isZero();
        assertThat(report.problems()).containsExactly(
                "duplicate id 20 at events.stamped-0@1 and events.stamped-1@0",
                "duplicate id 30 3 times: events.stamped-0@2, events.stamped-1@1, events.stamped-2@5");
    }

    @Test
    void shouldListAtMostFourLocationsOfADuplicate() {
        Verifier verifier = new Verifier(OUT, null);
        for (int partition = 0; partition < 6; partition++) {
            verifier.output(partition, 0, "7", null);
        }

        VerifyReport report = verifier.finish();

        assertThat(report.duplicates()).isEqualTo(5);
        assertThat(report.problems()).containsExactly("duplicate id 7 6 times: events.stamped-0@0, "
                + "events.stamped-1@0, events.stamped-2@0, events.stamped-3@0, ...");
    }

    @Test
    void shouldCountEqualAndLowerIdsAsDecreases() {
        stamped(0, 0, 5, 0);
        stamped(0, 1, 5, 1);
        stamped(0, 2, 3, 2);
        stamped(0, 3, 7, 3);
        stamped(1, 0, 1, 0);
        stamped(1, 1, 9, 1);
        stamped(1, 2, 8, 2);
        sources(0, 0, 1, 2, 3);
        sources(1, 0, 1, 2);

        VerifyReport report = verifier.finish();

        assertThat(report.decreases()).isEqualTo(3);
        assertThat(report.duplicates()).isEqualTo(1);
        assertThat(report.clean()).isFalse();
        assertThat(report.summaryLine()).isEqualTo("records=7 duplicates=1 missing=0 extra=0");
        assertThat(report.problems()).contains(
                "decrease in partition 0 at offset 1: 5 after 5",
                "decrease in partition 0 at offset 2: 3 after 5",
                "decrease in partition 1 at offset 2: 8 after 9");
    }

    @Test
    void shouldCompareAnIdWithThePreviousStampedRecordOfItsPartition() {
        Verifier verifier = new Verifier(null);
        verifier.output(0, 0, "5", null);
        verifier.output(0, 1, null, null);
        verifier.output(0, 2, "6", null);

        VerifyReport report = verifier.finish();

        assertThat(report.decreases()).isZero();
        assertThat(report.unstamped()).isEqualTo(1);
    }

    @Test
    void shouldCountRecordWithoutIdHeaderAsUnstamped() {
        verifier.output(0, 0, null, RAW + "/0/0");
        sources(0, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.unstamped()).isEqualTo(1);
        assertThat(report.duplicates()).isZero();
        assertThat(report.extra()).isZero();
        assertThat(report.clean()).isFalse();
        assertThat(report.problems()).containsExactly("unstamped: events.stamped-0@0 has no snowstamp-id header");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "abc", "12a", "-5", "+5", " 5", "5 ", "1.0", "0x10", "9223372036854775808",
            "99999999999999999999"})
    void shouldCountRecordWithUnparsableIdHeaderAsUnstamped(String header) {
        Verifier verifier = new Verifier(OUT, null);
        verifier.output(3, 7, header, null);
        verifier.output(3, 8, header, null);

        VerifyReport report = verifier.finish();

        assertThat(report.unstamped()).isEqualTo(2);
        assertThat(report.duplicates()).isZero();
        assertThat(report.decreases()).isZero();
        assertThat(report.problems()).startsWith(
                "unstamped: events.stamped-3@7 has an unparsable snowstamp-id header \"" + header + "\"");
    }

    @Test
    void shouldAcceptTheLargestLongAsId() {
        Verifier verifier = new Verifier(null);
        verifier.output(0, 0, "0", null);
        verifier.output(0, 1, "9223372036854775807", null);

        assertThat(verifier.finish().clean()).isTrue();
    }

    @Test
    void shouldShortenLongGarbageHeadersInProblems() {
        Verifier verifier = new Verifier(OUT, null);
        verifier.output(0, 0, "x".repeat(1000), null);

        assertThat(verifier.finish().problems()).containsExactly(
                "unstamped: events.stamped-0@0 has an unparsable snowstamp-id header \"" + "x".repeat(40) + "...\"");
    }

    @Test
    void shouldCountSourceRecordsNothingPointsAtAsMissing() {
        stamped(0, 0, 1, 0);
        stamped(0, 1, 2, 1);
        stamped(0, 2, 3, 3);
        sources(0, 0, 1, 2, 3, 4);
        sources(1, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.missing()).isEqualTo(3);
        assertThat(report.extra()).isZero();
        assertThat(report.sourceRecords()).isEqualTo(6);
        assertThat(report.summaryLine()).isEqualTo("records=3 duplicates=0 missing=3 extra=0");
        assertThat(report.problems()).containsExactly(
                "missing: events.raw-0@2", "missing: events.raw-0@4", "missing: events.raw-1@0");
    }

    @Test
    void shouldCountEachStampingOfASourceRecordAfterTheFirstAsExtra() {
        stamped(1, 7, 1, 7);
        stamped(1, 8, 2, 8);
        stamped(1, 9, 3, 7);
        stamped(2, 0, 4, 0);
        stamped(2, 1, 5, 0);
        stamped(2, 2, 6, 0);
        sources(1, 7, 8);
        sources(2, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.extra()).isEqualTo(3);
        assertThat(report.missing()).isZero();
        assertThat(report.summaryLine()).isEqualTo("records=6 duplicates=0 missing=0 extra=3");
        assertThat(report.problems()).containsExactly(
                "extra: events.raw-1@7 stamped 2 times (events.stamped-1@7, @9)",
                "extra: events.raw-2@0 stamped 3 times (events.stamped-2@0, @1, @2)");
    }

    @Test
    void shouldCountPointersAtOffsetsTheSourceLacksAsExtra() {
        stamped(0, 0, 1, 0);
        stamped(0, 1, 2, 1); // compacted away in the source
        stamped(0, 2, 3, 2);
        stamped(0, 3, 4, 99); // beyond the source's end
        stamped(0, 4, 5, 99);
        verifier.output(0, 5, "6", RAW + "/5/0"); // a partition the source lacks
        sources(0, 0, 2);

        VerifyReport report = verifier.finish();

        assertThat(report.extra()).isEqualTo(4);
        assertThat(report.missing()).isZero();
        assertThat(report.problems()).containsExactly(
                "extra: events.raw-0@1 is not in the source but stamped 1 time (events.stamped-0@1)",
                "extra: events.raw-0@99 is not in the source but stamped 2 times (events.stamped-0@3, @4)",
                "extra: events.raw-5@0 is not in the source but stamped 1 time (events.stamped-0@5)");
    }

    @Test
    void shouldCountEveryPointerAsExtraWhenTheSourceIsEmpty() {
        stamped(0, 0, 1, 0);
        stamped(0, 1, 2, 1);

        VerifyReport report = verifier.finish();

        assertThat(report.extra()).isEqualTo(2);
        assertThat(report.sourceRecords()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"other/0/0", "events.raw2/0/0", "xevents.raw/0/0", "events/0/0"})
    void shouldCountPointersAtAnotherTopicAsExtra(String header) {
        verifier.output(0, 0, "1", header);
        sources(0, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.extra()).isEqualTo(1);
        assertThat(report.missing()).isEqualTo(1);
        assertThat(report.problems()).contains("extra: events.stamped-0@0 comes from "
                + header.substring(0, header.indexOf('/')) + "-0@0, not from events.raw");
    }

    @Test
    void shouldCountRecordWithoutProvenanceAsExtra() {
        verifier.output(0, 0, "1", null);
        sources(0, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.extra()).isEqualTo(1);
        assertThat(report.missing()).isEqualTo(1);
        assertThat(report.problems()).containsExactly(
                "missing: events.raw-0@0", "extra: events.stamped-0@0 has no snowstamp-src header");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "garbage", "events.raw/0", "/0/0", "events.raw//0", "events.raw/0/",
            "events.raw/x/1", "events.raw/0/-1", "events.raw/-1/0", "events.raw/2147483648/0",
            "events.raw/0/99999999999999999999"})
    void shouldCountRecordWithUnparsableProvenanceAsExtra(String header) {
        verifier.output(0, 0, "1", header);
        sources(0, 0);

        VerifyReport report = verifier.finish();

        assertThat(report.extra()).isEqualTo(1);
        assertThat(report.missing()).isEqualTo(1);
        assertThat(report.problems()).contains(
                "extra: events.stamped-0@0 has an unparsable snowstamp-src header \"" + header + "\"");
    }

    @Test
    void shouldSplitProvenanceAtTheLastTwoSlashes() {
        Verifier verifier = new Verifier(OUT, "a/b");
        verifier.output(0, 0, "1", "a/b/0/0");
        verifier.source(0, 0);

        assertThat(verifier.finish().clean()).isTrue();
    }

    @Test
    void shouldIgnoreProvenanceWithoutSource() {
        Verifier verifier = new Verifier(null);
        verifier.output(0, 0, "1", null);
        verifier.output(0, 1, "2", "garbage");
        verifier.output(0, 2, "3", "other/0/0");
        verifier.output(0, 3, "4", RAW + "/0/0");
        verifier.output(0, 4, "5", RAW + "/0/0");

        VerifyReport report = verifier.finish();

        assertThat(report).isEqualTo(new VerifyReport(5, 0, 0, 0, 0, 0, 0, List.of()));
    }

    @Test
    void shouldCheckInterleavedPartitionsEachInItsOwnOrder() {
        // globally the IDs go up and down; within each partition they increase
        stamped(0, 0, 10, 0);
        stamped(1, 0, 5, 0);
        stamped(0, 1, 30, 1);
        stamped(1, 1, 25, 1);
        stamped(0, 2, 50, 2);
        stamped(1, 1000, 45, 3);
        sources(1, 0);
        sources(0, 0);
        sources(1, 1);
        sources(0, 1, 2);
        sources(1, 2, 3);

        VerifyReport report = verifier.finish();

        assertThat(report.decreases()).isZero();
        assertThat(report.duplicates()).isZero();
        assertThat(report.extra()).isZero();
        assertThat(report.missing()).isEqualTo(1);
        assertThat(report.problems()).containsExactly("missing: events.raw-1@2");
    }

    @Test
    void shouldMatchProvenanceAcrossPartitionsInAnyOrder() {
        // output partitions 0 and 1 both point into source partition 0, out of offset order
        verifier.output(0, 0, "1", RAW + "/0/3");
        verifier.output(0, 1, "2", RAW + "/0/1");
        verifier.output(1, 0, "3", RAW + "/0/2");
        verifier.output(1, 1, "4", RAW + "/0/0");
        verifier.output(1, 2, "5", RAW + "/0/1");
        sources(0, 0, 1, 2, 3);

        VerifyReport report = verifier.finish();

        assertThat(report.missing()).isZero();
        assertThat(report.extra()).isEqualTo(1);
        assertThat(report.problems()).containsExactly(
                "extra: events.raw-0@1 stamped 2 times (events.stamped-0@1, events.stamped-1@2)");
    }

    @Test
    void shouldBoundProblemsAndRepresentEveryKind() {
        for (int i = 0; i < 100; i++) {
            stamped(0, i, 1000 - i, i); // each after the first: a decrease
            stamped(1, i, 1000 - i, i); // each: a duplicate of partition 0
            verifier.output(2, i, null, RAW + "/2/" + i); // unstamped
            stamped(3, i, 5000 + i, 1000 + i / 2); // twice each, and not in the source
        }
        for (int i = 0; i < 100; i++) {
            sources(0, i);
            sources(1, i);
            sources(2, i);
            sources(3, 2000 + i); // missing
        }

        VerifyReport report = verifier.finish();

        assertThat(report.records()).isEqualTo(400);
        assertThat(report.duplicates()).isEqualTo(100);
        assertThat(report.decreases()).isEqualTo(198);
        assertThat(report.unstamped()).isEqualTo(100);
        assertThat(report.missing()).isEqualTo(100);
        assertThat(report.extra()).isEqualTo(100);
        assertThat(report.problems()).hasSize(Verifier.MAX_PROBLEMS);
        assertThat(report.problems()).filteredOn(p -> p.startsWith("duplicate id ")).hasSize(4);
        assertThat(report.problems()).filteredOn(p -> p.startsWith("missing: ")).hasSize(4);
        assertThat(report.problems()).filteredOn(p -> p.startsWith("extra: ")).hasSize(4);
        assertThat(report.problems()).filteredOn(p -> p.startsWith("decrease in partition ")).hasSize(4);
        assertThat(report.problems()).filteredOn(p -> p.startsWith("unstamped: ")).hasSize(4);
        assertThat(report.problems()).contains(
                "duplicate id 901 at events.stamped-0@99 and events.stamped-1@99",
                "missing: events.raw-3@2000",
                "decrease in partition 0 at offset 1: 999 after 1000",
                "unstamped: events.stamped-2@0 has no snowstamp-id header");
        assertThat(report.problems()).contains(
                "extra: events.raw-3@1000 is not in the source but stamped 2 times (events.stamped-3@0, @1)");
    }

    @Test
    void shouldGiveUnusedRoomToKindsWithMoreExamples() {
        Verifier verifier = new Verifier(OUT, null);
        verifier.output(0, 0, null, null);
        for (int i = 0; i < 50; i++) {
            verifier.output(1, i, "1", null);
        }

        VerifyReport report = verifier.finish();

        assertThat(report.problems()).hasSize(Verifier.MAX_PROBLEMS);
        assertThat(report.problems()).filteredOn(p -> p.startsWith("decrease")).hasSize(18);
    }

    @Test
    void shouldTreatDecodedAndRawHeadersAlike() {
        Verifier raw = new Verifier(OUT, RAW);
        Verifier decoded = new Verifier(OUT, RAW);
        raw.output(0, 0, "5", RAW + "/0/0");
        decoded.output(0, 0, 5, RAW, 0, 0);
        raw.output(0, 1, "5", RAW + "/0/0");
        decoded.output(0, 1, 5, RAW, 0, 0);
        raw.output(0, 2, null, null);
        decoded.output(0, 2, -1, null, -1, -1);
        raw.output(1, 0, "3", "other/1/0");
        decoded.output(1, 0, 3, "other", 1, 0);
        raw.output(1, 1, "4", RAW + "/1/9");
        decoded.output(1, 1, 4, RAW, 1, 9);
        for (Verifier verifier : List.of(raw, decoded)) {
            verifier.source(0, 0);
            verifier.source(1, 0);
        }

        VerifyReport fromRaw = raw.finish();
        VerifyReport fromDecoded = decoded.finish();

        assertThat(fromDecoded).isEqualTo(new VerifyReport(5, 1, 1, 4, 1, 1, 2, fromRaw.problems()));
        assertThat(fromRaw).isEqualTo(fromDecoded);
    }

    @Test
    void shouldNameTheOutputTopicGenericallyWhenNotGiven() {
        Verifier verifier = new Verifier(null);
        verifier.output(4, 2, null, null);

        assertThat(verifier.finish().problems()).containsExactly("unstamped: output-4@2 has no snowstamp-id header");
    }

    @Test
    void shouldRejectOffsetsOutOfOrder() {
        verifier.output(0, 5, "1", null);
        verifier.output(1, 0, "1", null);

        assertThatThrownBy(() -> verifier.output(0, 5, "2", null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("output partition 0: offset 5 after 5");
        assertThatThrownBy(() -> verifier.output(0, -1, "2", null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> verifier.output(-1, 0, "2", null)).isInstanceOf(IllegalArgumentException.class);

        verifier.source(0, 3);
        assertThatThrownBy(() -> verifier.source(0, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("source partition 0: offset 2 after 3");
    }

    @Test
    void shouldRejectCallsOutOfOrder() {
        verifier.output(0, 0, "1", RAW + "/0/0");
        verifier.source(0, 0);

        assertThatThrownBy(() -> verifier.output(0, 1, "2", null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("after source(...)");

        verifier.finish();
        assertThatThrownBy(verifier::finish).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> verifier.source(0, 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> verifier.output(0, 1, 2, null, -1, -1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldRejectSourceRecordsWithoutSourceTopic() {
        Verifier verifier = new Verifier(null);

        assertThatThrownBy(() -> verifier.source(0, 0))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("without a source topic");
    }
}
