package io.snowstamp;

import io.snowstamp.config.Keys;
import io.snowstamp.testing.Cli;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README is part of the product: it must show every key and the current --help text. */
class DocsTest {
    private static String readme() throws Exception {
        return Files.readString(Path.of("README.md"));
    }

    @Test
    void shouldDocumentEveryConfigurationKey() throws Exception {
        String readme = readme();
        assertThat(Keys.help().keySet()).isNotEmpty()
                .allSatisfy(key -> assertThat(readme).contains("| `" + key + "` |"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "demo", "run", "broker", "topics apply", "produce", "consume", "decode", "verify", "bench", "changelog inspect", "changelog history", "changelog export", "changelog import", "recover", "tags create", "tags set-step", "tags list", "workers list", "workers release"})
    void shouldShowTheCurrentHelpOfEveryCommand(String command) throws Exception {
        String[] args = (command.isEmpty() ? "--help" : command + " --help").split(" ");
        Cli.Result help = Cli.run(args);
        assertThat(help.exitCode()).isZero();
        assertThat(readme())
                .as("README.md shows an old '%s --help': regenerate the Command reference section from the jar", command)
                .contains("```\n" + help.out() + "```");
    }

    @Test
    void shouldGiveExactlyTheTwoQuickStartCommands() throws Exception {
        String quickStart = readme().split("## Quick start")[1].split("\n## ")[0];
        assertThat(quickStart).contains("```sh\nmvn -q -B -DskipTests package && java -jar target/snowstamp.jar demo\nmvn -B verify\n```");
        assertThat(Files.readString(Path.of(".ci/run"))).contains("mvn -B verify");
    }
}
