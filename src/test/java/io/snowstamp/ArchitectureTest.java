package io.snowstamp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Import rules checked on the source text (the idea of Kafka's checkstyle import-control): {@code id/}
 * is pure Java at the bottom of {@code cli, admin, embedded -> runtime -> stream, recovery -> state -> id}.
 * Surefire runs with the project directory as working directory, so the paths are relative to it.
 */
class ArchitectureTest {

    private static final Path ID_SOURCES = Paths.get("src/main/java/io/snowstamp/id");

    /** Any mention, so fully qualified names and static imports are caught as well as imports. */
    private static final Pattern KAFKA = Pattern.compile("org\\.apache\\.kafka");

    /**
     * A reference to a snowstamp sub-package above {@code id} (config, state, stream, ...). The root
     * package stays allowed: it holds what every layer shares, such as the root exception.
     */
    private static final Pattern OTHER_SNOWSTAMP_PACKAGE = Pattern.compile("\\bio\\.snowstamp\\.(?!id\\.)[a-z]\\w*\\.");

    @Test
    void shouldKeepKafkaOutOfTheIdPackage() {
        List<Path> sources = javaFiles(ID_SOURCES);
        assertThat(sources).as("Java files under %s", ID_SOURCES.toAbsolutePath()).isNotEmpty();
        assertThat(violations(sources, KAFKA)).isEmpty();
    }

    @Test
    void shouldKeepTheIdPackageIndependentOfTheRestOfSnowstamp() {
        assertThat(violations(javaFiles(ID_SOURCES), OTHER_SNOWSTAMP_PACKAGE)).isEmpty();
    }

    @Test
    void shouldKeepTheRegistryBelowTheRuntimeAndTheCommands() {
        // the registry is read at start and by heartbeats: it may use state, id, config and recovery, never what runs it
        Pattern above = Pattern.compile("\\bio\\.snowstamp\\.(cli|admin|runtime|embedded|stream)\\.");
        List<Path> sources = javaFiles(Paths.get("src/main/java/io/snowstamp/registry"));
        assertThat(sources).isNotEmpty();
        assertThat(violations(sources, above)).isEmpty();
    }

    @Test
    void shouldDetectImportsAndFullyQualifiedUsesInSourceText() {
        // the scanner itself must find what it is meant to find
        assertThat(matches("import org.apache.kafka.common.utils.Time;", KAFKA)).containsExactly("1: org.apache.kafka");
        assertThat(matches("class A {\n  org.apache.kafka.common.utils.Time t;\n}", KAFKA)).containsExactly("2: org.apache.kafka");
        assertThat(matches("import static org.apache.kafka.common.utils.Utils.min;", KAFKA)).hasSize(1);
        assertThat(matches("package io.snowstamp.id;\nimport io.snowstamp.state.WorkerState;", OTHER_SNOWSTAMP_PACKAGE))
                .containsExactly("2: io.snowstamp.state.");
        assertThat(matches("import io.snowstamp.stream.*;", OTHER_SNOWSTAMP_PACKAGE)).hasSize(1);
        assertThat(matches("import io.snowstamp.SnowstampException;", OTHER_SNOWSTAMP_PACKAGE)).isEmpty();
        assertThat(matches("package io.snowstamp.id;\nimport io.snowstamp.id.IdLayout;", OTHER_SNOWSTAMP_PACKAGE)).isEmpty();
        assertThat(matches("import java.util.List;", KAFKA)).isEmpty();
    }

    private static List<Path> javaFiles(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            return paths.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root.toAbsolutePath(), e);
        }
    }

    private static List<String> violations(List<Path> sources, Pattern forbidden) {
        List<String> found = new ArrayList<>();
        for (Path source : sources) {
            try {
                for (String match : matches(Files.readString(source), forbidden)) {
                    found.add(source + ":" + match);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + source.toAbsolutePath(), e);
            }
        }
        return found;
    }

    /** {@code "line: match"} for every occurrence of the pattern in the text. */
    private static List<String> matches(String text, Pattern pattern) {
        List<String> found = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher m = pattern.matcher(lines[i]);
            while (m.find()) {
                found.add((i + 1) + ": " + m.group());
            }
        }
        return found;
    }
}
