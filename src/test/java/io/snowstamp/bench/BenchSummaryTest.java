package io.snowstamp.bench;

import io.snowstamp.bench.BenchSummary.Case;
import io.snowstamp.bench.BenchSummary.Comparison;
import io.snowstamp.bench.BenchSummary.Compared;
import io.snowstamp.bench.BenchSummary.Goal;
import io.snowstamp.bench.BenchSummary.Role;
import io.snowstamp.bench.BenchSummary.Row;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class BenchSummaryTest {
    private static final Case BASE = new Case("pass", Role.FLOOR, Bench.Topo.IDENTITY, Bench.Settings.SHIPPED);
    private static final Case STAMP = new Case("stamp", Role.STAMPER, Bench.Topo.HEADER, Bench.Settings.SHIPPED,
            List.of(new Comparison(Role.FLOOR, "pass", 0.90, 1.15)));

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
        Compared floor = stamp.against(Role.FLOOR);
        assertThat(floor.throughputRatio().median()).isCloseTo(0.9, within(1e-9));
        assertThat(floor.throughputRatio().min()).isCloseTo(170 / 210.0, within(1e-9));
        assertThat(floor.throughputRatio().max()).isCloseTo(0.95, within(1e-9));
        assertThat(floor.cpuRatio().median()).isCloseTo(1.1, within(1e-9));
        assertThat(floor.throughputMet()).isTrue();
        assertThat(floor.cpuMet()).isTrue();
        assertThat(stamp.against(Role.PEER)).isNull();
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
        Compared floor = rows.get(1).against(Role.FLOOR);
        assertThat(floor.throughputRatio().median()).isCloseTo(0.85, within(1e-9));   // even count: the mean of the middle two
        assertThat(floor.throughputMet()).isFalse();
        assertThat(floor.cpuMet()).isFalse();
        assertThat(rows.get(0).compared()).isEmpty();

        List<Goal> goals = summary.goals();
        assertThat(goals).extracting(Goal::rule).containsExactly("stamp: records/s >= 0.90x pass", "stamp: CPU/record <= 1.15x pass");
        assertThat(goals).extracting(Goal::met).containsExactly(false, false);
        assertThat(goals.get(1).figure().median()).isCloseTo(1.25, within(1e-9));
    }

    @Test
    void shouldLeaveCpuRatioUnknownWhenCpuWasNotMeasured() {
        BenchSummary summary = new BenchSummary(List.of(BASE, STAMP));
        summary.add(BASE, result(100, -1));
        summary.add(STAMP, result(90, -1));
        Compared floor = summary.rows().get(1).against(Role.FLOOR);
        assertThat(floor.cpuRatio().known()).isFalse();
        assertThat(floor.cpuMet()).isNull();
        assertThat(floor.throughputMet()).isTrue();
        assertThat(summary.goals().get(1).met()).as("a CPU goal that could not be judged").isNull();
    }

    @Test
    void shouldCompareWithEachBaselineOfTheSameRoundSeparately() {
        Case peer = new Case("peer", Role.PEER, Bench.Topo.UUID_HEADER, Bench.Settings.SHIPPED);
        Case stamp = new Case("stamp", Role.STAMPER, Bench.Topo.HEADER, Bench.Settings.SHIPPED, List.of(
                new Comparison(Role.FLOOR, "pass", 0.97, 1.05), new Comparison(Role.PEER, "peer", 1.10, Double.NaN)));
        BenchSummary summary = new BenchSummary(List.of(BASE, peer, stamp));
        summary.add(BASE, result(100, 4));
        summary.add(peer, result(80, 5));
        summary.add(stamp, result(98, 4.1));

        Row row = summary.rows().get(2);
        assertThat(row.against(Role.FLOOR).throughputRatio().median()).isCloseTo(0.98, within(1e-9));
        assertThat(row.against(Role.FLOOR).cpuMet()).isTrue();
        assertThat(row.against(Role.PEER).throughputRatio().median()).isCloseTo(1.225, within(1e-9));
        assertThat(row.against(Role.PEER).throughputMet()).isTrue();
        assertThat(row.against(Role.PEER).cpuMet()).as("no CPU goal against the peer").isNull();
        assertThat(summary.goals()).extracting(Goal::rule).containsExactly("stamp: records/s >= 0.97x pass",
                "stamp: CPU/record <= 1.05x pass", "stamp: records/s >= 1.10x peer");
        assertThat(summary.goals()).extracting(Goal::met).containsExactly(true, true, true);
    }

    @Test
    void shouldRefuseAComparisonWithACaseThatIsNotRun() {
        assertThatThrownBy(() -> new BenchSummary(List.of(STAMP))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stamp is compared with pass");
    }

    @Test
    void shouldRefuseAResultOfAnUnknownCase() {
        BenchSummary summary = new BenchSummary(List.of(BASE));
        assertThatThrownBy(() -> summary.add(STAMP, result(1, 1))).isInstanceOf(IllegalArgumentException.class);
    }
}
