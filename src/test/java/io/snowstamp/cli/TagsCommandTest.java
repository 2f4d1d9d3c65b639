package io.snowstamp.cli;

import io.snowstamp.testing.Cli;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the tags commands and verify --mode refuse before they talk to Kafka. */
class TagsCommandTest {

    @Test
    void shouldListTheSubcommands() {
        Cli.Result help = Cli.run("tags");
        assertThat(help.exitCode()).as("a missing subcommand is a usage error").isEqualTo(2);
        assertThat(help.err()).contains("create", "set-step", "list");
        assertThat(Cli.run("--help").out()).contains("tags       Creates, changes and lists the tags of sequence mode.");
    }

    @Test
    void shouldRefuseInvalidTagsAndStepsWithExitTwo() {
        Cli.Result control = Cli.run("tags", "create", "a\tb");
        assertThat(control.exitCode()).isEqualTo(2);
        assertThat(control.err().strip()).startsWith("error: TAG 'a\tb' is invalid: a tag has no control characters")
                .doesNotContain("\n");

        Cli.Result tooLong = Cli.run("tags", "create", "x".repeat(201));
        assertThat(tooLong.exitCode()).isEqualTo(2);
        assertThat(tooLong.err()).contains("a tag is 1-200 characters, this one has 201");

        Cli.Result zeroStep = Cli.run("tags", "create", "order", "--step", "0");
        assertThat(zeroStep.exitCode()).isEqualTo(2);
        assertThat(zeroStep.err()).contains("--step=0 is invalid: accepted 1..1000000000");

        Cli.Result negativeStart = Cli.run("tags", "create", "order", "--start", "-5");
        assertThat(negativeStart.exitCode()).isEqualTo(2);
        assertThat(negativeStart.err()).contains("--start=-5 is invalid: accepted 0..4611686018427387904");

        Cli.Result hugeStep = Cli.run("tags", "set-step", "order", "2000000000");
        assertThat(hugeStep.exitCode()).isEqualTo(2);
        assertThat(hugeStep.err()).contains("STEP=2000000000 is invalid");

        assertThat(Cli.run("tags", "set-step", "order").exitCode()).isEqualTo(2);
        assertThat(Cli.run("tags", "list", "--timeout", "soon").exitCode()).isEqualTo(2);
    }

    @Test
    void shouldRefuseAnUnknownVerifyMode() {
        Cli.Result mode = Cli.run("verify", "--mode", "leaf");
        assertThat(mode.exitCode()).isEqualTo(2);
        assertThat(mode.err()).contains("--mode=leaf is invalid: accepted snowflake or sequence");
    }

    @Test
    void shouldRefuseTheDemoInSequenceMode() {
        Cli.Result demo = Cli.run("demo", "--set", "id.mode=sequence");
        assertThat(demo.exitCode()).isEqualTo(2);
        assertThat(demo.err()).contains("id.mode=sequence is invalid: accepted snowflake here");
    }
}
