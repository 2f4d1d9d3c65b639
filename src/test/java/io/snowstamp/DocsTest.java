package io.snowstamp;

import io.snowstamp.config.Keys;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README is part of the product: it must show every key and the two quick-start commands. */
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

    @Test
    void shouldGiveExactlyTheTwoQuickStartCommands() throws Exception {
        String quickStart = readme().split("## Quick start")[1].split("\n## ")[0];
        assertThat(quickStart).contains("```sh\nmvn -q -B -DskipTests package && java -jar target/snowstamp.jar demo\nmvn -B verify\n```");
        assertThat(Files.readString(Path.of(".ci/run"))).contains("mvn -B verify");
    }
}
