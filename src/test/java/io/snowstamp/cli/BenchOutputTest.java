package io.snowstamp.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.bench.Bench;
import io.snowstamp.bench.BenchResult;
import io.snowstamp.bench.BenchSummary;
import io.snowstamp.bench.BenchSummary.Case;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchOutputTest {
    private static final Case DEFAULTS = new Case("identity, Kafka Streams defaults", Bench.Topo.IDENTITY, Bench.Settings.KAFKA_DEFAULTS);
    private static final Case PASS = new Case("identity, shipped settings", Bench.Topo.IDENTITY, Bench.Settings.SHIPPED);
    private static final Case HEADER = new Case("snowstamp header, shipped", Bench.Topo.HEADER, Bench.Settings.SHIPPED,
            "identity, shipped settings", 0.90, 1.15);

    private static BenchOutput output() {
        BenchSummary summary = new BenchSummary(List.of(DEFAULTS, PASS, HEADER));
        for (double load : new double[] {1.0, 0.8}) {
            summary.add(DEFAULTS, new BenchResult("d", 1000, 2, 100_000 * load, 6, -1, -1, -1, 100));
            summary.add(PASS, new BenchResult("p", 1000, 2, 200_000 * load, 4, 2, -1, -1, 100));
            summary.add(HEADER, new BenchResult("h", 1000, 2, 170_000 * load, 5, 3, -1, -1, 100));
        }
        return new BenchOutput(summary.rows(), List.of(), 0, 0);
    }

    @Test
    void shouldPutRatiosGoalsAndTheirVerdictInTheJson() {
        ObjectNode json = output().json(1000, 4, 2, false, 1.5);
        assertThat(json.get("brokerInThisProcess").asBoolean()).isFalse();
        assertThat(json.get("loadAverageBefore").asDouble()).isEqualTo(1.5);
        JsonNode header = json.get("results").get(2);
        assertThat(header.get("name").asText()).isEqualTo("snowstamp header, shipped");
        assertThat(header.get("ratioSameSettings").asDouble()).isEqualTo(0.85);
        assertThat(header.get("throughputGoal").asDouble()).isEqualTo(0.90);
        assertThat(header.get("throughputGoalMet").asBoolean()).isFalse();
        assertThat(header.get("cpuRatioSameSettings").asDouble()).isEqualTo(1.25);
        assertThat(header.get("cpuGoalMet").asBoolean()).isFalse();
        assertThat(header.get("roundsRecordsPerSecond")).hasSize(2);
        assertThat(header.get("brokerCpuMicrosPerRecord").asDouble()).isEqualTo(3.0);
        assertThat(header.get("brokerCpuRatioSameSettings").asDouble()).isEqualTo(1.5);
        assertThat(json.get("results").get(0).has("brokerCpuMicrosPerRecord")).as("not measured in that case").isFalse();
        assertThat(json.get("results").get(1).has("ratioSameSettings")).isFalse();
        assertThat(json.get("results").get(1).has("throughputGoal")).isFalse();
    }

    @Test
    void shouldPrintTheSameFiguresInTheTable() {
        StringWriter text = new StringWriter();
        output().printTables(new PrintWriter(text, true));
        assertThat(text.toString()).contains("x pass-through", "CPU x pass-through", "snowstamp header, shipped", "0.85",
                ">= 0.90 NOT met", "<= 1.15 NOT met", "1.25", "broker CPU/record", "3.00 us", "1.50");
    }
}
