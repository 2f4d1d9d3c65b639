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
}
