package io.snowstamp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.BenchResult;
import io.snowstamp.bench.BenchSummary.Row;
import io.snowstamp.bench.BenchSummary.Spread;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code bench} prints: the tables for a terminal and the JSON document, from one summary, so
 * both always say the same. Ratios are to the pass-through of the same round (median, lowest-highest).
 */
final class BenchOutput {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<Row> rows;
    private final List<BenchResult> latency;
    private final int latencyRate;
    private final int latencySeconds;

    BenchOutput(List<Row> rows, List<BenchResult> latency, int latencyRate, int latencySeconds) {
        this.rows = rows;
        this.latency = latency;
        this.latencyRate = latencyRate;
        this.latencySeconds = latencySeconds;
    }

    /** The 1-minute load average of the machine (-1 where the OS has none): a shared machine says so here. */
    static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    void printTables(PrintWriter out) {
        out.println();
        boolean broker = rows.stream().anyMatch(row -> row.brokerCpuMicros().known());
        List<String> header = new ArrayList<>(List.of("topology (exactly-once)", "records/s", "x pass-through", "goal", "CPU/record",
                "CPU x pass-through", "goal"));
        if (broker) {
            header.addAll(List.of("broker CPU/record", "broker CPU x pass-through"));
        }
        header.addAll(List.of("x id. defaults", "peak heap", "whole run"));
        TextTable table = new TextTable(header.toArray(String[]::new));
        double defaults = rows.get(0).throughput().median();
        for (Row row : rows) {
            List<String> cells = new ArrayList<>(List.of(row.spec().name(), String.format(Locale.ROOT, "%,.0f", row.throughput().median()),
                    spread(row.throughputRatio()), goal(">=", row.spec().throughputGoal(), row.throughputMet()),
                    micros(row.cpuMicros()), spread(row.cpuRatio()), goal("<=", row.spec().cpuGoal(), row.cpuMet())));
            if (broker) {
                cells.addAll(List.of(micros(row.brokerCpuMicros()), spread(row.brokerCpuRatio())));
            }
            cells.addAll(List.of(String.format(Locale.ROOT, "%.2f", row.throughput().median() / defaults),
                    row.median().peakHeapMiB() + " MiB", String.format(Locale.ROOT, "%.1f s", row.median().seconds())));
            table.add(cells.toArray());
        }
        table.print(out);
        if (!latency.isEmpty()) {
            out.println();
            out.printf("latency at %,d records/s for %d s (produce -> read_committed consume):%n", latencyRate, latencySeconds);
            double baseP99 = latency.get(0).p99Millis();
            for (BenchResult l : latency) {
                out.printf(Locale.ROOT, "%-40s p50 %6.0f ms   p99 %6.0f ms   p99 x identity %.2f%n", l.name(), l.p50Millis(),
                        l.p99Millis(), l.p99Millis() / baseP99);
            }
        }
        out.println();
    }

    ObjectNode json(long records, int partitions, int rounds, boolean brokerInThisProcess, double loadBefore) {
        ObjectNode summary = JSON.createObjectNode();
        summary.put("records", records);
        summary.put("partitions", partitions);
        summary.put("repeat", rounds);
        summary.put("cores", Runtime.getRuntime().availableProcessors());
        summary.put("maxHeapMiB", Runtime.getRuntime().maxMemory() / (1024 * 1024));
        // the CPU figures are this process's: the broker's too when it is embedded here
        summary.put("brokerInThisProcess", brokerInThisProcess);
        summary.put("loadAverageBefore", round(loadBefore, 100));
        summary.put("loadAverageAfter", round(loadAverage(), 100));
        ArrayNode results = summary.putArray("results");
        double defaults = rows.get(0).throughput().median();
        for (Row row : rows) {
            ObjectNode r = results.addObject();
            r.put("name", row.spec().name());
            r.put("recordsPerSecond", Math.round(row.throughput().median()));
            if (row.throughputRatio().known()) {
                r.put("ratioSameSettings", round(row.throughputRatio().median(), 1000));
                r.put("ratioSameSettingsMin", round(row.throughputRatio().min(), 1000));
                r.put("ratioSameSettingsMax", round(row.throughputRatio().max(), 1000));
            }
            putGoal(r, "throughputGoal", "throughputGoalMet", row.spec().throughputGoal(), row.throughputMet());
            r.put("ratioIdentityDefaults", round(row.throughput().median() / defaults, 1000));
            r.put("cpuMicrosPerRecord", round(row.cpuMicros().median(), 100));
            if (row.cpuRatio().known()) {
                r.put("cpuRatioSameSettings", round(row.cpuRatio().median(), 1000));
                r.put("cpuRatioSameSettingsMin", round(row.cpuRatio().min(), 1000));
                r.put("cpuRatioSameSettingsMax", round(row.cpuRatio().max(), 1000));
            }
            putGoal(r, "cpuGoal", "cpuGoalMet", row.spec().cpuGoal(), row.cpuMet());
            if (row.brokerCpuMicros().known()) {
                r.put("brokerCpuMicrosPerRecord", round(row.brokerCpuMicros().median(), 100));
            }
            if (row.brokerCpuRatio().known()) {
                r.put("brokerCpuRatioSameSettings", round(row.brokerCpuRatio().median(), 1000));
                r.put("brokerCpuRatioSameSettingsMin", round(row.brokerCpuRatio().min(), 1000));
                r.put("brokerCpuRatioSameSettingsMax", round(row.brokerCpuRatio().max(), 1000));
            }
            r.put("peakHeapMiB", row.median().peakHeapMiB());
            r.put("wholeRunSeconds", round(row.median().seconds(), 10));
            ArrayNode perRound = r.putArray("roundsRecordsPerSecond");
            row.rounds().forEach(b -> perRound.add(Math.round(b.recordsPerSecond())));
        }
        if (!latency.isEmpty()) {
            double baseP99 = latency.get(0).p99Millis();
            for (BenchResult l : latency) {
                ObjectNode row = results.addObject();
                row.put("name", "latency: " + l.name());
                row.put("p50Millis", l.p50Millis());
                row.put("p99Millis", l.p99Millis());
                row.put("p99RatioIdentityDefaults", round(l.p99Millis() / baseP99, 1000));
            }
        }
        return summary;
    }

    private static void putGoal(ObjectNode row, String goalKey, String metKey, double goal, Boolean met) {
        if (!Double.isNaN(goal)) {
            row.put(goalKey, goal);
            if (met != null) {
                row.put(metKey, met);
            }
        }
    }

    private static String micros(Spread s) {
        return s.known() ? String.format(Locale.ROOT, "%.2f us", s.median()) : "-";
    }

    private static String spread(Spread s) {
        if (!s.known()) {
            return "-";
        }
        return s.min() == s.max() ? String.format(Locale.ROOT, "%.2f", s.median())
                : String.format(Locale.ROOT, "%.2f (%.2f-%.2f)", s.median(), s.min(), s.max());
    }

    private static String goal(String op, double goal, Boolean met) {
        if (Double.isNaN(goal)) {
            return "-";
        }
        return op + " " + String.format(Locale.ROOT, "%.2f", goal) + (met == null ? "" : met ? " met" : " NOT met");
    }

    private static double round(double value, int scale) {
        return Math.round(value * scale) / (double) scale;
    }
}
