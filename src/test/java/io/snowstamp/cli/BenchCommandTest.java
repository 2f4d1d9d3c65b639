package io.snowstamp.cli;

import io.snowstamp.testing.Cli;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class BenchCommandTest {
    @Test
    void shouldChangeWhichCaseRunsFirstAndWhichRunsBeforeEachOne() {
        List<String> cases = List.of("a", "b", "c", "d");
        assertThat(BenchCommand.roundOrder(cases, 0)).containsExactly("a", "b", "c", "d");
        assertThat(BenchCommand.roundOrder(cases, 1)).containsExactly("d", "c", "b", "a");
        assertThat(BenchCommand.roundOrder(cases, 2)).containsExactly("d", "a", "b", "c");
        assertThat(BenchCommand.roundOrder(cases, 3)).containsExactly("c", "b", "a", "d");
        for (int round = 0; round < 6; round++) {
            assertThat(BenchCommand.roundOrder(cases, round)).containsExactlyInAnyOrderElementsOf(cases);
        }
    }

    @Test
    void shouldRefuseABrokerPidWhoseCpuCannotBeReadBeforeStartingAnything() {
        Cli.Result result = Cli.run("bench", "--bootstrap-servers", "127.0.0.1:1", "--broker-pid", "999999999");
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err().strip().lines()).hasSize(1);
        assertThat(result.err()).contains("--broker-pid 999999999: no process of this id");
    }

    @Test
    void shouldReadFewerRecordsOfTheSameBytesAbove256Bytes() {
        assertThat(BenchCommand.recordsAt(1_000_000, 80)).isEqualTo(1_000_000);
        assertThat(BenchCommand.recordsAt(1_000_000, 256)).isEqualTo(1_000_000);
        assertThat(BenchCommand.recordsAt(1_000_000, 1024)).isEqualTo(250_000);
        assertThat(BenchCommand.recordsAt(1_000_000, 4096)).isEqualTo(62_500);
        assertThat(BenchCommand.recordsAt(1, 500_000)).isEqualTo(1);
    }

    @Test
    void shouldRefuseValueSizesOutOfRangeOrTwiceBeforeStartingAnything() {
        for (String sizes : new String[] {"0", "80,80", "600000"}) {
            Cli.Result result = Cli.run("bench", "--bootstrap-servers", "127.0.0.1:1", "--value-bytes", sizes);
            assertThat(result.exitCode()).as(sizes).isEqualTo(2);
            assertThat(result.err()).contains("--value-bytes", "each size once, from 1 to 524288 bytes");
        }
    }

    @Test
    void shouldStopTheNeighbourAfterTheRunEvenWhenItThrows() throws Exception {
        List<ProcessHandle> during = new java.util.ArrayList<>();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FootprintRuns.beside(2, () -> {
            ProcessHandle.current().children().filter(ProcessHandle::isAlive).forEach(during::add);
            throw new IllegalStateException("a measured stamper exited");
        })).hasMessage("a measured stamper exited");
        assertThat(during).as("the busy loops, children of this process, while the run ran").hasSizeGreaterThanOrEqualTo(2);
        assertThat(during).as("every busy loop gone after the run").noneMatch(ProcessHandle::isAlive);

        List<ProcessHandle> ok = new java.util.ArrayList<>();
        assertThat(FootprintRuns.beside(1, () -> {
            ProcessHandle.current().children().filter(ProcessHandle::isAlive).forEach(ok::add);
            return 7;
        })).isEqualTo(7);
        assertThat(ok).isNotEmpty().noneMatch(ProcessHandle::isAlive);
    }

    @Test
    void shouldRefuseBadNeighbourAndGuaranteeOptionsWithOneLineBeforeStartingAnything() {
        String[][] cases = {
                {"--footprint-partitions", "8", "--neighbour-cores", "-1"},
                {"--footprint-partitions", "8", "--neighbour-cores", "1,1"},
                {"--footprint-partitions", "8", "--neighbour-cores", "65"},
                {"--footprint-partitions", "8", "--footprint-guarantee", "exactly_once"},
                {"--footprint-partitions", "8", "--footprint-guarantee", "at_least_once,at_least_once"},
                {"--neighbour-cores", "1"},
                {"--footprint-guarantee", "at_least_once"},
                {"--footprint-set", "stamp.provenance=false"},
                {"--footprint-partitions", "8", "--footprint-set", "stamp.provenanse=false"},
                {"--footprint-partitions", "8", "--footprint-set", "kafka.acks=1"}};
        String[] expected = {"--neighbour-cores [-1]: busy loops per run", "--neighbour-cores [1, 1]: busy loops per run",
                "--neighbour-cores [65]: busy loops per run", "--footprint-guarantee exactly_once: exactly_once_v2, at_least_once, or both",
                "--footprint-guarantee at_least_once,at_least_once: exactly_once_v2, at_least_once, or both",
                "--neighbour-cores applies to the footprint runs: give --footprint-partitions too",
                "--footprint-guarantee applies to the footprint runs: give --footprint-partitions too",
                "--footprint-set applies to the footprint runs: give --footprint-partitions too",
                "--footprint-set stamp.provenanse: accepted a configuration key", "--footprint-set kafka.acks: accepted"};
        for (int i = 0; i < cases.length; i++) {
            List<String> args = new java.util.ArrayList<>(List.of("bench", "--bootstrap-servers", "127.0.0.1:1"));
            args.addAll(List.of(cases[i]));
            Cli.Result result = Cli.run(args.toArray(String[]::new));
            assertThat(result.exitCode()).as(String.join(" ", cases[i])).isEqualTo(2);
            assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
            assertThat(result.err()).contains(expected[i]);
        }
    }
}
