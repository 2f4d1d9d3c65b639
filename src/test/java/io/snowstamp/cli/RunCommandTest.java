package io.snowstamp.cli;

import io.snowstamp.testing.Cli;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@code run} refuses before it talks to Kafka. */
class RunCommandTest {

    @Test
    void shouldRefuseAnUnknownProfileWithOneLine() {
        Cli.Result run = Cli.run("run", "--profile", "fast");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).isEqualTo("error: profile=fast is invalid: accepted one of default, throughput (from --profile)");
    }

    @Test
    void shouldExplainTheProfilesInItsHelp() {
        Cli.Result help = Cli.run("run", "--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("--profile=NAME", "throughput (1 s commits");
    }
}
