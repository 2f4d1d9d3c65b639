package io.snowstamp.bench;

import io.snowstamp.bench.BenchSummary.Case;
import io.snowstamp.bench.BenchSummary.Row;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class BenchSummaryTest {
    private static final Case BASE = new Case("pass", Bench.Topo.IDENTITY, Bench.Settings.SHIPPED);
    private static final Case STAMP = new Case("stamp", Bench.Topo.HEADER, Bench.Settings.SHIPPED, "pass", 0.90, 1.15);

    private static BenchResult result(double rate, double cpu) {
        return new BenchResult("x", 1000, 1, rate, cpu, -1, -1, -1, 10);
    }

    @Test
    void shouldCompareEachRoundWithTheBaselineOfTheSameRound() {
        BenchSummary summary = new BenchSummary(List.of(BASE, STAMP));
        // round 1 on a busy machine (everything slow), round 2 and 3 quiet: per-round ratios stay near 0.9
        summary.add(BASE, result(100, 5));
        summary.add(STAMP, result(95, 5.5));
        summary.add(BASE, result(200, 4));
        summary.add(STAMP, result(180, 5));
        summary.add(BASE, result(210, 4));
        summary.add(STAMP, result(170, 4.4));

        Row stamp = summary.rows().get(1);
        assertThat(stamp.throughputRatio().median()).isCloseTo(0.9, within(1e-9));
        assertThat(stamp.throughputRatio().min()).isCloseTo(170 / 210.0, within(1e-9));
        assertThat(stamp.throughputRatio().max()).isCloseTo(0.95, within(1e-9));
        assertThat(stamp.cpuRatio().median()).isCloseTo(1.1, within(1e-9));
        assertThat(stamp.throughputMet()).isTrue();
        assertThat(stamp.cpuMet()).isTrue();
        assertThat(stamp.throughput().median()).isEqualTo(170);
        assertThat(stamp.median().recordsPerSecond()).isEqualTo(170);
        assertThat(stamp.rounds()).hasSize(3);
    }

    @Test
    void shouldSayWhenAGoalIsMissedAndNothingForCasesWithoutOne() {
        BenchSummary summary = new BenchSummary(List.of(BASE, STAMP));
        summary.add(BASE, result(100, 4));
        summary.add(STAMP, result(80, 6));
        summary.add(BASE, result(100, 4));
        summary.add(STAMP, result(90, 4));

        List<Row> rows = summary.rows();
        assertThat(rows.get(1).throughputRatio().median()).isCloseTo(0.85, within(1e-9));   // even count: the mean of the middle two
        assertThat(rows.get(1).throughputMet()).isFalse();
        assertThat(rows.get(1).cpuMet()).isFalse();
        assertThat(rows.get(0).throughputRatio().known()).isFalse();
        assertThat(rows.get(0).throughputMet()).isNull();
        assertThat(rows.get(0).cpuMet()).isNull();
    }

    @Test
    void shouldLeaveCpuRatioUnknownWhenCpuWasNotMeasured() {
        BenchSummary summary = new BenchSummary(List.of(BASE, STAMP));
        summary.add(BASE, result(100, -1));
        summary.add(STAMP, result(90, -1));
        assertThat(summary.rows().get(1).cpuRatio().known()).isFalse();
        assertThat(summary.rows().get(1).cpuMet()).isNull();
    }

    @Test
    void shouldRefuseAResultOfAnUnknownCase() {
        BenchSummary summary = new BenchSummary(List.of(BASE));
        assertThatThrownBy(() -> summary.add(STAMP, result(1, 1))).isInstanceOf(IllegalArgumentException.class);
    }
}
