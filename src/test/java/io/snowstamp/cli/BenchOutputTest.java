package io.snowstamp.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.Bench;
import io.snowstamp.bench.BenchResult;
import io.snowstamp.bench.BenchSummary;
import io.snowstamp.bench.BenchSummary.Case;
import io.snowstamp.bench.BenchSummary.Comparison;
import io.snowstamp.bench.BenchSummary.Role;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchOutputTest {
    private static final Case CEILING = new Case("ceiling", Role.CEILING, Bench.Topo.IDENTITY, Bench.Settings.SHIPPED);
    private static final Case FLOOR = new Case("floor", Role.FLOOR, Bench.Topo.FORWARD_HEADERS, Bench.Settings.SHIPPED,
            List.of(new Comparison(Role.CEILING, "ceiling")));
    private static final Case PEER = new Case("peer", Role.PEER, Bench.Topo.UUID_HEADER, Bench.Settings.SHIPPED,
            List.of(new Comparison(Role.CEILING, "ceiling")));
    private static final Case HEADER = new Case("snowstamp header", Role.STAMPER, Bench.Topo.HEADER, Bench.Settings.SHIPPED, List.of(
            new Comparison(Role.FLOOR, "floor", 0.97, 1.05), new Comparison(Role.PEER, "peer", 1.10, Double.NaN),
            new Comparison(Role.CEILING, "ceiling")));

    private static BenchOutput output() {
        List<BenchOutput.Size> sizes = new java.util.ArrayList<>();
        for (int bytes : new int[] {80, 1024}) {
            BenchSummary summary = new BenchSummary(List.of(CEILING, FLOOR, PEER, HEADER));
            for (double load : new double[] {1.0, 0.8}) {
                summary.add(CEILING, new BenchResult("c", 1000, 2, 200_000 * load, 4, 2, -1, -1, 100));
                summary.add(FLOOR, new BenchResult("f", 1000, 2, 150_000 * load, 5, 3, -1, -1, 100));
                summary.add(PEER, new BenchResult("p", 1000, 2, 120_000 * load, 6, 3, -1, -1, 100));
                summary.add(HEADER, new BenchResult("h", 1000, 2, 135_000 * load, 5, 3, -1, -1, 100));
            }
            sizes.add(new BenchOutput.Size(new Bench.Input("in-" + bytes, 1000, bytes, bytes + 0.5), 1000, summary));
        }
        return new BenchOutput(sizes, List.of(), 0, 0);
    }

    @Test
    void shouldPutEveryComparisonAndGoalInTheJsonGroupedBySize() {
        ObjectNode json = output().json(1000, 4, 2, false, 1.5);
        assertThat(json.get("brokerInThisProcess").asBoolean()).isFalse();
        assertThat(json.get("loadAverageBefore").asDouble()).isEqualTo(1.5);
        assertThat(json.get("sizes")).hasSize(2);
        JsonNode size = json.get("sizes").get(1);
        assertThat(size.get("valueBytes").asInt()).isEqualTo(1024);
        assertThat(size.get("meanValueBytes").asDouble()).isEqualTo(1024.5);
        JsonNode header = size.get("results").get(3);
        assertThat(header.get("name").asText()).isEqualTo("snowstamp header");
        assertThat(header.get("role").asText()).isEqualTo("stamper");
        assertThat(header.get("vsFloor").get("baseline").asText()).isEqualTo("floor");
        assertThat(header.get("vsFloor").get("ratio").asDouble()).isEqualTo(0.9);
        assertThat(header.get("vsFloor").get("throughputGoal").asDouble()).isEqualTo(0.97);
        assertThat(header.get("vsFloor").get("throughputGoalMet").asBoolean()).isFalse();
        assertThat(header.get("vsFloor").get("cpuRatio").asDouble()).isEqualTo(1.0);
        assertThat(header.get("vsFloor").get("cpuGoalMet").asBoolean()).isTrue();
        assertThat(header.get("vsPeer").get("ratio").asDouble()).isEqualTo(1.125);
        assertThat(header.get("vsPeer").get("throughputGoalMet").asBoolean()).isTrue();
        assertThat(header.get("vsPeer").has("cpuGoal")).isFalse();
        assertThat(header.get("vsCeiling").get("ratio").asDouble()).isEqualTo(0.675);
        assertThat(header.get("vsCeiling").has("throughputGoal")).isFalse();
        assertThat(header.get("brokerCpuMicrosPerRecord").asDouble()).isEqualTo(3.0);
        assertThat(header.get("roundsRecordsPerSecond")).hasSize(2);
        assertThat(size.get("results").get(0).has("vsCeiling")).as("the ceiling itself").isFalse();

        JsonNode goals = json.get("goals");
        assertThat(goals).hasSize(6);      // three goals at each of two sizes
        JsonNode cpu = goals.get(1);
        assertThat(cpu.get("goal").asText()).isEqualTo("snowstamp header: CPU/record <= 1.05x floor");
        assertThat(cpu.get("valueBytes").asInt()).isEqualTo(80);
        assertThat(cpu.get("against").asText()).isEqualTo("floor");
        assertThat(cpu.get("metric").asText()).isEqualTo("cpuPerRecord");
        assertThat(cpu.get("atMost").asDouble()).isEqualTo(1.05);
        assertThat(cpu.get("ratio").asDouble()).isEqualTo(1.0);
        assertThat(cpu.get("met").asBoolean()).isTrue();
        assertThat(goals.get(2).get("atLeast").asDouble()).isEqualTo(1.10);
    }

    @Test
    void shouldPrintTheSameFiguresInTheTables() {
        StringWriter text = new StringWriter();
        output().printTables(new PrintWriter(text, true));
        assertThat(text.toString()).contains("values of 80 bytes (mean 80.5), 1,000 records per run:", "values of 1024 bytes",
                "x floor", "CPU x floor", "x peer", "CPU x peer", "x ceiling", "0.90 [>= 0.97 NOT met]", "1.00 [<= 1.05 met]",
                "1.13 [>= 1.10 met]", "0.83", "0.68", "broker CPU/record", "3.00 us",
                "goals (ratios to a baseline of the same round", "snowstamp header: records/s >= 0.97x floor", "NOT met");
    }
}
