package io.snowstamp.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the rounds of one bench run add up to, at one value size. Every round runs every case once, so
 * each contender is compared with its baselines (ceiling, floor, peer) <em>of its own round</em> (same
 * settings, same broker, minutes apart): a load change on a shared machine moves both sides of a ratio, and the spread of the
 * per-round ratios shows how much it still moved them. Pure arithmetic: nothing here runs Kafka.
 */
public final class BenchSummary {
    /** What a case is, for the reader: the stamper, or one of the baselines it is compared with. */
    public enum Role {
        /** The headerless pass-through: no ID, no headers; no stamper can reach it. */
        CEILING,
        /** The stamper's topology carrying the same bytes as the stamper, issuing no ID. */
        FLOOR,
        /** What a user would write instead of snowstamp. */
        PEER,
        /** snowstamp itself. */
        STAMPER,
        /** A case that explains the others: other settings, a step of the breakdown. */
        OTHER
    }

    /**
     * One comparison of a case with a baseline, round by round.
     *
     * @param against        the baseline's role (one comparison per role and case)
     * @param baseline       name of the baseline case
     * @param throughputGoal lowest acceptable throughput ratio to the baseline (NaN: no goal)
     * @param cpuGoal        highest acceptable CPU-per-record ratio to the baseline (NaN: no goal)
     */
    public record Comparison(Role against, String baseline, double throughputGoal, double cpuGoal) {
        /** A comparison that is reported, without a goal. */
        public Comparison(Role against, String baseline) {
            this(against, baseline, Double.NaN, Double.NaN);
        }
    }

    /** One measured case and what it is compared with. */
    public record Case(String name, Role role, Bench.Topo topo, Bench.Settings settings, List<Comparison> comparisons) {
        public Case {
            comparisons = List.copyOf(comparisons);
        }

        /** A case without a baseline: reported, not compared. */
        public Case(String name, Role role, Bench.Topo topo, Bench.Settings settings) {
            this(name, role, topo, settings, List.of());
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
     * One case compared with one baseline.
     *
     * @param throughputRatio records/s over the baseline's of the same round
     * @param cpuRatio        CPU per record over the baseline's of the same round
     * @param brokerCpuRatio  the broker's CPU per record over its CPU per record in the baseline's run of the same round
     */
    public record Compared(Comparison comparison, Spread throughputRatio, Spread cpuRatio, Spread brokerCpuRatio) {
        /** Whether the median ratio reaches the throughput goal; null when there is no goal or no ratio. */
        public Boolean throughputMet() {
            return Double.isNaN(comparison.throughputGoal()) || !throughputRatio.known() ? null
                    : throughputRatio.median() >= comparison.throughputGoal();
        }

        /** Whether the median CPU ratio stays within the CPU goal; null when there is no goal or no CPU was measured. */
        public Boolean cpuMet() {
            return Double.isNaN(comparison.cpuGoal()) || !cpuRatio.known() ? null : cpuRatio.median() <= comparison.cpuGoal();
        }
    }

    /**
     * One case's summary.
     *
     * @param median          the round with the median throughput (its CPU, heap and time too)
     * @param throughput      records/s over the rounds
     * @param cpuMicros       the stamper process's CPU per record over the rounds
     * @param brokerCpuMicros the broker process's CPU per record over the rounds (none unless measured)
     * @param compared        one per comparison of the case, in its order
     */
    public record Row(Case spec, BenchResult median, Spread throughput, Spread cpuMicros, Spread brokerCpuMicros,
                      List<Compared> compared, List<BenchResult> rounds) {
        /** The comparison with the baseline of that role; null when the case has none. */
        public Compared against(Role role) {
            return compared.stream().filter(c -> c.comparison().against() == role).findFirst().orElse(null);
        }
    }

    /**
     * One goal and how the run fared against it.
     *
     * @param cpu    whether the goal is on CPU per record (at most {@code goal} times the baseline's) rather than on
     *               throughput (at least {@code goal} times the baseline's)
     * @param figure the per-round ratios: median, lowest, highest
     * @param met    whether the median meets the goal; null when no ratio could be computed (CPU not measured)
     */
    public record Goal(String caseName, Comparison comparison, boolean cpu, double goal, Spread figure, Boolean met) {
        /** The goal in words, e.g. {@code snowstamp header: records/s >= 0.97x floor: forward + 2 headers, no ID}. */
        public String rule() {
            return String.format(Locale.ROOT, "%s: %s %.2fx %s", caseName, cpu ? "CPU/record <=" : "records/s >=", goal,
                    comparison.baseline());
        }
    }

    private final List<Case> cases;
    private final Map<String, List<BenchResult>> results = new LinkedHashMap<>();

    /** @throws IllegalArgumentException when a comparison names a case that is not among {@code cases} */
    public BenchSummary(List<Case> cases) {
        this.cases = List.copyOf(cases);
        for (Case c : cases) {
            results.put(c.name(), new ArrayList<>());
        }
        for (Case c : cases) {
            for (Comparison comparison : c.comparisons()) {
                if (!results.containsKey(comparison.baseline())) {
                    throw new IllegalArgumentException(c.name() + " is compared with " + comparison.baseline() + ", not a case of this bench");
                }
            }
        }
    }

    /** The cases, in the order given. */
    public List<Case> cases() {
        return cases;
    }

    /** Adds a case's result of the next round it has not run in yet. */
    public void add(Case c, BenchResult result) {
        List<BenchResult> list = results.get(c.name());
        if (list == null) {
            throw new IllegalArgumentException("not a case of this bench: " + c.name());
        }
        list.add(result);
    }

    /** One row per case that ran, in the order the cases were given. */
    public List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (Case c : cases) {
            List<BenchResult> mine = results.get(c.name());
            if (mine.isEmpty()) {
                continue;
            }
            List<Compared> compared = new ArrayList<>();
            for (Comparison comparison : c.comparisons()) {
                compared.add(compare(comparison, mine, results.getOrDefault(comparison.baseline(), List.of())));
            }
            List<BenchResult> sorted = new ArrayList<>(mine);
            sorted.sort(Comparator.comparingDouble(BenchResult::recordsPerSecond));
            rows.add(new Row(c, sorted.get(sorted.size() / 2), Spread.of(mine.stream().map(BenchResult::recordsPerSecond).toList()),
                    Spread.of(mine.stream().map(r -> measured(r.cpuMicros())).toList()),
                    Spread.of(mine.stream().map(r -> measured(r.brokerCpuMicros())).toList()), compared, List.copyOf(mine)));
        }
        return rows;
    }

    /** Every goal of the cases that ran, in case order: throughput before CPU, per comparison. */
    public List<Goal> goals() {
        List<Goal> goals = new ArrayList<>();
        for (Row row : rows()) {
            for (Compared c : row.compared()) {
                Comparison comparison = c.comparison();
                if (!Double.isNaN(comparison.throughputGoal())) {
                    goals.add(new Goal(row.spec().name(), comparison, false, comparison.throughputGoal(), c.throughputRatio(),
                            c.throughputMet()));
                }
                if (!Double.isNaN(comparison.cpuGoal())) {
                    goals.add(new Goal(row.spec().name(), comparison, true, comparison.cpuGoal(), c.cpuRatio(), c.cpuMet()));
                }
            }
        }
        return goals;
    }

    /** Round by round: each result over the baseline's of the same round. */
    private static Compared compare(Comparison comparison, List<BenchResult> mine, List<BenchResult> base) {
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
        return new Compared(comparison, Spread.of(ratios), Spread.of(cpuRatios), Spread.of(brokerRatios));
    }

    /** A CPU figure, NaN when not measured (-1). */
    private static double measured(double micros) {
        return micros > 0 ? micros : Double.NaN;
    }

    private static double ratio(double micros, double baseMicros) {
        return micros > 0 && baseMicros > 0 ? micros / baseMicros : Double.NaN;
    }
}
