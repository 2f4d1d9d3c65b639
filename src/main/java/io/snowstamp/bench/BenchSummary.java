package io.snowstamp.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the rounds of one bench run add up to. Every round runs every case once, so each contender
 * is compared with the pass-through <em>of its own round</em> (same settings, same broker, minutes
 * apart): a load change on a shared machine moves both sides of a ratio, and the spread of the
 * per-round ratios shows how much it still moved them. Pure arithmetic: nothing here runs Kafka.
 */
public final class BenchSummary {
    /**
     * One measured case.
     *
     * @param baseline       name of the case it is compared with, round by round (null: none)
     * @param throughputGoal lowest acceptable throughput ratio to the baseline (NaN: no goal)
     * @param cpuGoal        highest acceptable CPU-per-record ratio to the baseline (NaN: no goal)
     */
    public record Case(String name, Bench.Topo topo, Bench.Settings settings, String baseline, double throughputGoal,
                       double cpuGoal) {
        /** A case without a baseline: reported, not compared. */
        public Case(String name, Bench.Topo topo, Bench.Settings settings) {
            this(name, topo, settings, null, Double.NaN, Double.NaN);
        }
    }

    /** Median, lowest and highest of per-round values; NaN when there is none. */
    public record Spread(double median, double min, double max) {
        static final Spread NONE = new Spread(Double.NaN, Double.NaN, Double.NaN);

        static Spread of(List<Double> values) {
            List<Double> known = values.stream().filter(v -> !Double.isNaN(v)).sorted().toList();
            if (known.isEmpty()) {
                return NONE;
            }
            int n = known.size();
            double median = n % 2 == 1 ? known.get(n / 2) : (known.get(n / 2 - 1) + known.get(n / 2)) / 2;
            return new Spread(median, known.get(0), known.get(n - 1));
        }

        public boolean known() {
            return !Double.isNaN(median);
        }
    }

    /**
     * One case's summary.
     *
     * @param median          the round with the median throughput (its CPU, heap and time too)
     * @param throughput      records/s over the rounds
     * @param cpuMicros       the stamper process's CPU per record over the rounds
     * @param throughputRatio records/s over the baseline's of the same round
     * @param cpuRatio        CPU per record over the baseline's of the same round
     * @param brokerCpuMicros the broker process's CPU per record over the rounds (none unless measured)
     * @param brokerCpuRatio  the broker's CPU per record over its CPU per record in the baseline's run of the same round
     */
    public record Row(Case spec, BenchResult median, Spread throughput, Spread cpuMicros, Spread throughputRatio,
                      Spread cpuRatio, Spread brokerCpuMicros, Spread brokerCpuRatio, List<BenchResult> rounds) {
        /** Null when the case has no throughput goal. */
        public Boolean throughputMet() {
            return Double.isNaN(spec.throughputGoal()) || !throughputRatio.known() ? null : throughputRatio.median() >= spec.throughputGoal();
        }

        /** Null when the case has no CPU goal or no CPU was measured. */
        public Boolean cpuMet() {
            return Double.isNaN(spec.cpuGoal()) || !cpuRatio.known() ? null : cpuRatio.median() <= spec.cpuGoal();
        }
    }

    private final List<Case> cases;
    private final Map<String, List<BenchResult>> results = new LinkedHashMap<>();

    public BenchSummary(List<Case> cases) {
        this.cases = List.copyOf(cases);
        for (Case c : cases) {
            results.put(c.name(), new ArrayList<>());
        }
    }

    /** Adds a case's result of the next round it has not run in yet. */
    public void add(Case c, BenchResult result) {
        List<BenchResult> list = results.get(c.name());
        if (list == null) {
            throw new IllegalArgumentException("not a case of this bench: " + c.name());
        }
        list.add(result);
    }

    /** One row per case, in the order the cases were given. */
    public List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (Case c : cases) {
            List<BenchResult> mine = results.get(c.name());
            if (mine.isEmpty()) {
                continue;
            }
            List<BenchResult> base = c.baseline() == null ? List.of() : results.get(c.baseline());
            List<Double> ratios = new ArrayList<>();
            List<Double> cpuRatios = new ArrayList<>();
            List<Double> brokerRatios = new ArrayList<>();
            for (int round = 0; round < Math.min(mine.size(), base.size()); round++) {
                BenchResult m = mine.get(round);
                BenchResult b = base.get(round);
                ratios.add(m.recordsPerSecond() / b.recordsPerSecond());
                cpuRatios.add(ratio(m.cpuMicros(), b.cpuMicros()));
                brokerRatios.add(ratio(m.brokerCpuMicros(), b.brokerCpuMicros()));
            }
            List<BenchResult> sorted = new ArrayList<>(mine);
            sorted.sort(Comparator.comparingDouble(BenchResult::recordsPerSecond));
            rows.add(new Row(c, sorted.get(sorted.size() / 2), Spread.of(mine.stream().map(BenchResult::recordsPerSecond).toList()),
                    Spread.of(mine.stream().map(r -> measured(r.cpuMicros())).toList()), Spread.of(ratios), Spread.of(cpuRatios),
                    Spread.of(mine.stream().map(r -> measured(r.brokerCpuMicros())).toList()), Spread.of(brokerRatios),
                    List.copyOf(mine)));
        }
        return rows;
    }

    /** A CPU figure, NaN when not measured (-1). */
    private static double measured(double micros) {
        return micros > 0 ? micros : Double.NaN;
    }

    private static double ratio(double micros, double baseMicros) {
        return micros > 0 && baseMicros > 0 ? micros / baseMicros : Double.NaN;
    }
}
