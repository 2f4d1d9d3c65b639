package io.snowstamp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.Bench;
import io.snowstamp.bench.BenchResult;
import io.snowstamp.bench.BenchSummary;
import io.snowstamp.bench.BenchSummary.Compared;
import io.snowstamp.bench.BenchSummary.Goal;
import io.snowstamp.bench.BenchSummary.Role;
import io.snowstamp.bench.BenchSummary.Row;
import io.snowstamp.bench.BenchSummary.Spread;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code bench} prints: a table per value size and the table of goals for a terminal, and the
 * JSON document, from the same summaries, so both always say the same. Ratios are to a baseline of the
 * same round (median, lowest-highest).
 */
final class BenchOutput {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<Role> AGAINST = List.of(Role.FLOOR, Role.PEER, Role.CEILING);

    /** The cases at one value size, measured on one input. */
    record Size(Bench.Input input, long records, BenchSummary summary) {
    }

    private final List<Size> sizes;
    private final List<BenchResult> latency;
    private final int latencyRate;
    private final int latencySeconds;

    BenchOutput(List<Size> sizes, List<BenchResult> latency, int latencyRate, int latencySeconds) {
        this.sizes = List.copyOf(sizes);
        this.latency = latency;
        this.latencyRate = latencyRate;
        this.latencySeconds = latencySeconds;
    }

    /** The 1-minute load average of the machine (-1 where the OS has none): a shared machine says so here. */
    static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    void printTables(PrintWriter out) {
        for (Size size : sizes) {
            printSize(size, out);
        }
        TextTable goals = new TextTable("goal", "value bytes", "figure (median, lowest-highest)", "met");
        for (Size size : sizes) {
            for (Goal goal : size.summary().goals()) {
                goals.add(goal.rule(), size.input().valueBytes(), spread(goal.figure()), verdict(goal.met()));
            }
        }
        if (!goals.isEmpty()) {
            out.println();
            out.println("goals (ratios to a baseline of the same round; met = the median meets the goal):");
            goals.print(out);
        }
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

    private static void printSize(Size size, PrintWriter out) {
        List<Row> rows = size.summary().rows();
        out.println();
        out.printf(Locale.ROOT, "values of %d bytes (mean %.1f), %,d records per run:%n", size.input().valueBytes(),
                size.input().meanValueBytes(), size.records());
        boolean broker = rows.stream().anyMatch(row -> row.brokerCpuMicros().known());
        List<String> header = new ArrayList<>(List.of("case (exactly-once)", "records/s", "CPU/record", "x floor", "CPU x floor",
                "x peer", "CPU x peer", "x ceiling"));
        if (broker) {
            header.addAll(List.of("broker CPU/record", "broker CPU x floor"));
        }
        header.addAll(List.of("peak heap", "whole run"));
        TextTable table = new TextTable(header.toArray(String[]::new));
        for (Row row : rows) {
            Compared floor = row.against(Role.FLOOR);
            Compared peer = row.against(Role.PEER);
            Compared ceiling = row.against(Role.CEILING);
            List<String> cells = new ArrayList<>(List.of(row.spec().name(), String.format(Locale.ROOT, "%,.0f", row.throughput().median()),
                    micros(row.cpuMicros()), throughput(floor), cpu(floor), throughput(peer), cpu(peer), throughput(ceiling)));
            if (broker) {
                cells.addAll(List.of(micros(row.brokerCpuMicros()), floor == null ? "-" : spread(floor.brokerCpuRatio())));
            }
            cells.addAll(List.of(row.median().peakHeapMiB() + " MiB", String.format(Locale.ROOT, "%.1f s", row.median().seconds())));
            table.add(cells.toArray());
        }
        table.print(out);
    }

    ObjectNode json(long records, int partitions, int rounds, boolean brokerInThisProcess, double loadBefore) {
        ObjectNode document = JSON.createObjectNode();
        document.put("records", records);
        document.put("partitions", partitions);
        document.put("repeat", rounds);
        document.put("cores", Runtime.getRuntime().availableProcessors());
        document.put("maxHeapMiB", Runtime.getRuntime().maxMemory() / (1024 * 1024));
        // the CPU figures are this process's: the broker's too when it is embedded here
        document.put("brokerInThisProcess", brokerInThisProcess);
        document.put("loadAverageBefore", round(loadBefore, 100));
        document.put("loadAverageAfter", round(loadAverage(), 100));
        ArrayNode goals = document.putArray("goals");
        for (Size size : sizes) {
            for (Goal goal : size.summary().goals()) {
                ObjectNode g = goals.addObject();
                g.put("goal", goal.rule());
                g.put("valueBytes", size.input().valueBytes());
                g.put("case", goal.caseName());
                g.put("against", goal.comparison().against().name().toLowerCase(Locale.ROOT));
                g.put("baseline", goal.comparison().baseline());
                g.put("metric", goal.cpu() ? "cpuPerRecord" : "throughput");
                g.put(goal.cpu() ? "atMost" : "atLeast", goal.goal());
                putSpread(g, "ratio", goal.figure(), 1000);
                if (goal.met() != null) {
                    g.put("met", goal.met());
                }
            }
        }
        ArrayNode sizeNodes = document.putArray("sizes");
        for (Size size : sizes) {
            ObjectNode s = sizeNodes.addObject();
            s.put("valueBytes", size.input().valueBytes());
            s.put("meanValueBytes", round(size.input().meanValueBytes(), 10));
            s.put("records", size.records());
            ArrayNode results = s.putArray("results");
            for (Row row : size.summary().rows()) {
                results.add(result(row));
            }
        }
        if (!latency.isEmpty()) {
            ArrayNode latencies = document.putArray("latency");
            double baseP99 = latency.get(0).p99Millis();
            for (BenchResult l : latency) {
                ObjectNode row = latencies.addObject();
                row.put("name", l.name());
                row.put("p50Millis", l.p50Millis());
                row.put("p99Millis", l.p99Millis());
                row.put("p99RatioIdentityDefaults", round(l.p99Millis() / baseP99, 1000));
            }
        }
        return document;
    }

    private static ObjectNode result(Row row) {
        ObjectNode r = JSON.createObjectNode();
        r.put("name", row.spec().name());
        r.put("role", row.spec().role().name().toLowerCase(Locale.ROOT));
        r.put("recordsPerSecond", Math.round(row.throughput().median()));
        if (row.cpuMicros().known()) {
            r.put("cpuMicrosPerRecord", round(row.cpuMicros().median(), 100));
        }
        if (row.brokerCpuMicros().known()) {
            r.put("brokerCpuMicrosPerRecord", round(row.brokerCpuMicros().median(), 100));
        }
        for (Role role : AGAINST) {
            Compared c = row.against(role);
            if (c != null) {
                r.set("vs" + role.name().charAt(0) + role.name().substring(1).toLowerCase(Locale.ROOT), comparison(c));
            }
        }
        r.put("peakHeapMiB", row.median().peakHeapMiB());
        r.put("wholeRunSeconds", round(row.median().seconds(), 10));
        ArrayNode perRound = r.putArray("roundsRecordsPerSecond");
        row.rounds().forEach(b -> perRound.add(Math.round(b.recordsPerSecond())));
        return r;
    }

    private static ObjectNode comparison(Compared c) {
        ObjectNode n = JSON.createObjectNode();
        n.put("baseline", c.comparison().baseline());
        putSpread(n, "ratio", c.throughputRatio(), 1000);
        if (!Double.isNaN(c.comparison().throughputGoal())) {
            n.put("throughputGoal", c.comparison().throughputGoal());
            if (c.throughputMet() != null) {
                n.put("throughputGoalMet", c.throughputMet());
            }
        }
        putSpread(n, "cpuRatio", c.cpuRatio(), 1000);
        if (!Double.isNaN(c.comparison().cpuGoal())) {
            n.put("cpuGoal", c.comparison().cpuGoal());
            if (c.cpuMet() != null) {
                n.put("cpuGoalMet", c.cpuMet());
            }
        }
        putSpread(n, "brokerCpuRatio", c.brokerCpuRatio(), 1000);
        return n;
    }

    /** {@code key}, {@code keyMin}, {@code keyMax}; nothing when not measured. */
    private static void putSpread(ObjectNode node, String key, Spread s, int scale) {
        if (s.known()) {
            node.put(key, round(s.median(), scale));
            node.put(key + "Min", round(s.min(), scale));
            node.put(key + "Max", round(s.max(), scale));
        }
    }

    private static String throughput(Compared c) {
        return c == null ? "-" : spread(c.throughputRatio()) + goal(">=", c.comparison().throughputGoal(), c.throughputMet());
    }

    private static String cpu(Compared c) {
        return c == null ? "-" : spread(c.cpuRatio()) + goal("<=", c.comparison().cpuGoal(), c.cpuMet());
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

    /** The goal beside a figure: {@code  [>= 0.97 met]}; nothing without a goal. */
    private static String goal(String op, double goal, Boolean met) {
        if (Double.isNaN(goal)) {
            return "";
        }
        return String.format(Locale.ROOT, " [%s %.2f %s]", op, goal, verdict(met));
    }

    private static String verdict(Boolean met) {
        return met == null ? "not measured" : met ? "met" : "NOT met";
    }

    private static double round(double value, int scale) {
        return Math.round(value * scale) / (double) scale;
    }
}
