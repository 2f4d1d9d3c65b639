package io.snowstamp.verify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VerifyReportTest {

    @Test
    void shouldBeCleanOnlyWithoutAnyProblemCount() {
        assertThat(new VerifyReport(10, 0, 0, 0, 0, 0, 10, List.of()).clean()).isTrue();
        assertThat(new VerifyReport(10, 1, 0, 0, 0, 0, 10, List.of()).clean()).isFalse();
        assertThat(new VerifyReport(10, 0, 1, 0, 0, 0, 10, List.of()).clean()).isFalse();
        assertThat(new VerifyReport(10, 0, 0, 1, 0, 0, 10, List.of()).clean()).isFalse();
        assertThat(new VerifyReport(10, 0, 0, 0, 1, 0, 10, List.of()).clean()).isFalse();
        assertThat(new VerifyReport(10, 0, 0, 0, 0, 1, 10, List.of()).clean()).isFalse();
    }

    @Test
    void shouldPrintTheSummaryLineOfTheCliContract() {
        VerifyReport report = new VerifyReport(10_000_000, 3, 2, 1, 5, 4, 9, List.of());

        assertThat(report.summaryLine()).isEqualTo("records=10000000 duplicates=3 missing=2 extra=1");
    }

    @Test
    void shouldCopyProblems() {
        List<String> problems = new ArrayList<>(List.of("missing: t-0@1"));
        VerifyReport report = new VerifyReport(0, 0, 1, 0, 0, 0, 1, problems);
        problems.clear();

        assertThat(report.problems()).containsExactly("missing: t-0@1");
        assertThatThrownBy(() -> report.problems().add("x")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void shouldRejectNegativeCountsAndNullProblems() {
        assertThatThrownBy(() -> new VerifyReport(-1, 0, 0, 0, 0, 0, 0, List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new VerifyReport(0, 0, 0, 0, 0, 0, 0, null))
                .isInstanceOf(NullPointerException.class);
    }
}
