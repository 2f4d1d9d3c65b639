package io.snowstamp.verify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SequenceCheckerTest {

    private final SequenceChecker checker = new SequenceChecker("out");

    private void feed(int partition, String tag, long... numbers) {
        for (long number : numbers) {
            checker.output(partition, offset++, tag, number);
        }
    }

    private long offset;

    @Test
    void shouldReportEveryTagWithItsGapsAndNoProblem() {
        feed(0, "order", 1001, 1002, 1003, 1011, 1012, 1021);
        feed(0, "invoice", 1, 2, 3);
        feed(1, "ticket", 5);

        SequenceChecker.Report report = checker.finish();

        assertThat(report.clean()).isTrue();
        assertThat(report.records()).isEqualTo(10);
        assertThat(report.gaps()).isEqualTo(2);
        assertThat(report.problems()).isEmpty();
        assertThat(report.tags()).extracting(SequenceChecker.TagResult::line).containsExactly(
                "tag invoice: records=3 numbers=1..3 gaps=0 skipped=0 duplicates=0 decreases=0 partitions=[0]",
                "tag order: records=6 numbers=1001..1021 gaps=2 skipped=15 duplicates=0 decreases=0 partitions=[0]",
                "tag ticket: records=1 numbers=5..5 gaps=0 skipped=0 duplicates=0 decreases=0 partitions=[1]");
    }

    @Test
    void shouldAllowTheSameNumberInDifferentTags() {
        feed(0, "a", 1, 2);
        feed(0, "b", 1, 2);

        assertThat(checker.finish().clean()).isTrue();
    }

    @Test
    void shouldCountARepeatAsDuplicateAndDecrease() {
        feed(2, "order", 1, 2, 3, 2, 4);

        SequenceChecker.Report report = checker.finish();

        assertThat(report.clean()).isFalse();
        assertThat(report.duplicates()).isEqualTo(1);
        assertThat(report.decreases()).isEqualTo(1);
        assertThat(report.tags().get(0).line())
                .isEqualTo("tag order: records=5 numbers=1..4 gaps=0 skipped=0 duplicates=1 decreases=1 partitions=[2]");
        assertThat(report.problems()).containsExactly("decrease: tag order in out-2 at offset 3: 2 after 3",
                "duplicate: tag order number 2 is on more than one record");
    }

    @Test
    void shouldFlagADecreaseWithoutARepeat() {
        feed(0, "order", 5, 3);

        SequenceChecker.Report report = checker.finish();

        assertThat(report.duplicates()).isZero();
        assertThat(report.decreases()).isEqualTo(1);
        assertThat(report.clean()).isFalse();
    }

    @Test
    void shouldFlagATagFoundInTwoPartitions() {
        feed(0, "order", 1, 2);
        feed(3, "order", 3, 4);

        SequenceChecker.Report report = checker.finish();

        assertThat(report.splitTags()).isEqualTo(1);
        assertThat(report.clean()).isFalse();
        assertThat(report.problems()).containsExactly("split: tag order is in partitions [0, 3] (did the output partition count change?)");
    }

    @Test
    void shouldCountRecordsWithoutTagOrNumberAsUnstamped() {
        checker.output(0, 0, null, 5L);
        checker.output(0, 1, "order", "-5");
        checker.output(0, 2, "order", (String) null);
        checker.output(0, 3, "order", "12");

        SequenceChecker.Report report = checker.finish();

        assertThat(report.unstamped()).isEqualTo(3);
        assertThat(report.records()).isEqualTo(4);
        assertThat(report.clean()).isFalse();
        assertThat(report.problems()).hasSize(3).first().isEqualTo("unstamped: out-0@0 has no snowstamp-tag header");
    }

    @Test
    void shouldKeepAtMostTwentyExamples() {
        for (int i = 0; i < 50; i++) {
            feed(0, "t" + i, 2, 1);
        }
        assertThat(checker.finish().problems()).hasSize(Verifier.MAX_PROBLEMS);
    }

    @Test
    void shouldHandleAMillionRecordsOfOneTag() {
        for (long n = 1; n <= 1_000_000; n++) {
            checker.output(0, n, "big", n + (n / 1000) * 7);
        }
        SequenceChecker.Report report = checker.finish();
        assertThat(report.clean()).isTrue();
        assertThat(report.tags()).singleElement().satisfies(tag -> {
            assertThat(tag.gaps()).isEqualTo(1000);
            assertThat(tag.skipped()).isEqualTo(7000);
        });
    }

    @Test
    void shouldRefuseCallsAfterFinish() {
        checker.finish();
        assertThatThrownBy(() -> checker.output(0, 0, "t", 1L)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(checker::finish).isInstanceOf(IllegalStateException.class);
    }
}
