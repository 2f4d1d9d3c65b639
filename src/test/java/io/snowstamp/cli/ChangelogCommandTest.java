package io.snowstamp.cli;

import io.snowstamp.testing.Cli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** What the changelog and recover commands refuse before they talk to Kafka. */
class ChangelogCommandTest {
    @TempDir
    Path work;

    @Test
    void shouldListTheSubcommandsAndRecover() {
        Cli.Result help = Cli.run("changelog");
        assertThat(help.exitCode()).as("a missing subcommand is a usage error").isEqualTo(2);
        assertThat(help.err()).contains("inspect", "history", "export", "import");
        assertThat(Cli.run("--help").out()).contains("changelog  Reads and writes the worker-state changelog",
                "recover    Computes safe resume points");
    }

    @Test
    void shouldRefuseBadUsageWithExitTwo() {
        Cli.Result format = Cli.run("changelog", "inspect", "--format", "xml");
        assertThat(format.exitCode()).isEqualTo(2);
        assertThat(format.err().strip().lines()).hasSize(1);
        assertThat(format.err()).contains("--format").contains("table, json");

        Cli.Result noFile = Cli.run("changelog", "import");
        assertThat(noFile.exitCode()).isEqualTo(2);
        assertThat(noFile.err()).contains("Missing required option: '--file=F'");

        Cli.Result timeout = Cli.run("changelog", "history", "--timeout", "soon");
        assertThat(timeout.exitCode()).isEqualTo(2);
        assertThat(timeout.err()).startsWith("error: --timeout=soon is invalid: accepted a duration");

        assertThat(Cli.run("recover", "--timeout", "1 week").exitCode()).isEqualTo(2);
    }

    @Test
    void shouldRefuseAMissingOrForeignImportFileBeforeConnecting() throws Exception {
        Path missing = work.resolve("nope.jsonl");
        Cli.Result absent = Cli.run("changelog", "import", "--file", missing.toString());
        assertThat(absent.exitCode()).as("a missing file named on the command line is a usage error").isEqualTo(2);
        assertThat(absent.err().strip()).startsWith("error: --file=" + missing + " is invalid: the file does not exist");

        Path csv = work.resolve("state.csv");
        Files.writeString(csv, "partition,lastId\n0,123\n");
        Cli.Result foreign = Cli.run("changelog", "import", "--file", csv.toString());
        assertThat(foreign.exitCode()).isEqualTo(1);
        assertThat(foreign.err().strip()).startsWith("error: " + csv + " line 1: not valid JSON (Unrecognized token 'partition'")
                .doesNotContain("\n");
    }
}
