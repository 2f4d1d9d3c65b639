package io.snowstamp.bench;

import io.snowstamp.bench.BenchSummary.Case;
import io.snowstamp.bench.BenchSummary.Comparison;
import io.snowstamp.bench.BenchSummary.Role;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The goals of issue 33, case by case: each stamper case against its own floor and peer. */
class BenchCasesTest {
    private static Case named(List<Case> cases, String name) {
        return cases.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    private static Comparison against(Case c, Role role) {
        return c.comparisons().stream().filter(x -> x.against() == role).findFirst().orElseThrow();
    }

    @Test
    void shouldHoldEachStamperModeToItsOwnFloorAndPeer() {
        List<Case> cases = BenchCases.at(80, false, false);
        assertThat(cases).extracting(Case::name).containsExactly(BenchCases.CEILING, BenchCases.HEADER_FLOOR, BenchCases.HEADER,
                BenchCases.COMPACT_FLOOR, BenchCases.COMPACT, BenchCases.UUID_PEER, BenchCases.JSON_FLOOR, BenchCases.JSON,
                BenchCases.JACKSON_PEER);
        assertThat(against(named(cases, BenchCases.HEADER), Role.FLOOR)).isEqualTo(new Comparison(Role.FLOOR, BenchCases.HEADER_FLOOR, 0.97, 1.05));
        assertThat(against(named(cases, BenchCases.HEADER), Role.PEER)).isEqualTo(new Comparison(Role.PEER, BenchCases.UUID_PEER, 1.0, Double.NaN));
        assertThat(against(named(cases, BenchCases.COMPACT), Role.FLOOR).baseline()).isEqualTo(BenchCases.COMPACT_FLOOR);
        assertThat(against(named(cases, BenchCases.JSON), Role.FLOOR).baseline()).isEqualTo(BenchCases.JSON_FLOOR);
        assertThat(against(named(cases, BenchCases.JSON), Role.PEER)).isEqualTo(new Comparison(Role.PEER, BenchCases.JACKSON_PEER, Double.NaN, Double.NaN));
        // every case is compared with the ceiling, the ceiling with nothing; BenchSummary accepts the list (every baseline runs)
        assertThat(cases).filteredOn(c -> c.role() != Role.CEILING).allSatisfy(c -> against(c, Role.CEILING));
        assertThat(named(cases, BenchCases.CEILING).comparisons()).isEmpty();
        new BenchSummary(cases);
    }

    /** Issue 45: JSON mode at least 1.25x the Jackson + UUID peer at 1 KiB and 4 KiB; the floor and 80 bytes reported only. */
    @Test
    void shouldHoldJsonModeAboveThePeerAt1And4KiBAndReportItsFloor() {
        assertThat(against(named(BenchCases.at(1024, false, false), BenchCases.JSON), Role.PEER).throughputGoal()).isEqualTo(1.25);
        assertThat(against(named(BenchCases.at(4096, false, false), BenchCases.JSON), Role.PEER).throughputGoal()).isEqualTo(1.25);
        assertThat(Double.isNaN(against(named(BenchCases.at(80, false, false), BenchCases.JSON), Role.PEER).throughputGoal())).isTrue();
        for (int size : new int[] {80, 1024, 4096}) {
            Comparison floor = against(named(BenchCases.at(size, false, false), BenchCases.JSON), Role.FLOOR);
            assertThat(Double.isNaN(floor.throughputGoal()) && Double.isNaN(floor.cpuGoal())).as("floor at %d B", size).isTrue();
        }
    }

    @Test
    void shouldHoldCompactHeaderModeAboveThePeerAt1KiBAndLevelElsewhere() {
        assertThat(against(named(BenchCases.at(1024, false, false), BenchCases.COMPACT), Role.PEER).throughputGoal()).isEqualTo(1.10);
        assertThat(against(named(BenchCases.at(4096, false, false), BenchCases.COMPACT), Role.PEER).throughputGoal()).isEqualTo(1.0);
        assertThat(against(named(BenchCases.at(1024, false, false), BenchCases.COMPACT), Role.FLOOR))
                .isEqualTo(new Comparison(Role.FLOOR, BenchCases.COMPACT_FLOOR, 0.97, 1.05));
        // the ceiling is reported, never a goal
        for (int size : new int[] {80, 1024, 4096}) {
            assertThat(BenchCases.at(size, false, false)).flatExtracting(Case::comparisons)
                    .filteredOn(c -> c.against() == Role.CEILING).allMatch(c -> Double.isNaN(c.throughputGoal()));
        }
    }

    @Test
    void shouldAddTheBreakdownAndProfileCasesWithoutGoals() {
        List<Case> cases = BenchCases.at(80, true, true);
        assertThat(cases).hasSize(14);
        assertThat(cases).extracting(Case::name).contains("forward, no headers", "snowstamp header, no provenance",
                "snowstamp json, compact headers", "pass-through, Kafka Streams defaults", "snowstamp header, throughput profile");
        new BenchSummary(cases);
        List<Case> defaults = BenchCases.at(80, false, false);
        assertThat(cases).filteredOn(c -> !defaults.contains(c)).hasSize(5)
                .allSatisfy(c -> assertThat(c.comparisons()).allMatch(x -> Double.isNaN(x.throughputGoal()) && Double.isNaN(x.cpuGoal())));
    }

    /** Issue 45: Avro mode at least 0.95x its floor's records/s and at most 1.10x its CPU per record at every size; the peer reported. */
    @Test
    void shouldHoldAvroModeToItsFloorAtEverySizeAndReportThePeer() {
        for (int size : new int[] {80, 1024, 4096}) {
            List<Case> cases = BenchCases.avroAt(size);
            assertThat(cases).extracting(Case::name).containsExactly(BenchCases.AVRO_CEILING, BenchCases.AVRO_FLOOR, BenchCases.AVRO,
                    BenchCases.AVRO_PEER);
            assertThat(against(named(cases, BenchCases.AVRO), Role.FLOOR)).isEqualTo(new Comparison(Role.FLOOR, BenchCases.AVRO_FLOOR, 0.95, 1.10));
            Comparison peer = against(named(cases, BenchCases.AVRO), Role.PEER);
            assertThat(Double.isNaN(peer.throughputGoal()) && Double.isNaN(peer.cpuGoal())).isTrue();
            new BenchSummary(cases);
        }
    }
}
