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
 * is pure Java at the bottom, and every package imports only packages below it in {@link #LAYERS}.
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
    void shouldKeepKafkaOutOfTheJsonPackage() {
        List<Path> sources = javaFiles(Paths.get("src/main/java/io/snowstamp/json"));
        assertThat(sources).isNotEmpty();
        assertThat(violations(sources, KAFKA)).isEmpty();
    }

    @Test
    void shouldKeepTheIdPackageIndependentOfTheRestOfSnowstamp() {
        assertThat(violations(javaFiles(ID_SOURCES), OTHER_SNOWSTAMP_PACKAGE)).isEmpty();
    }

    /**
     * The declared layering, top first: a package may import packages of a later row only (never its
     * own row, never an earlier one). {@code config} is read by every layer above {@code id}.
     * design.md shows the same picture.
     */
    static final List<List<String>> LAYERS = List.of(
            List.of("cli"),
            List.of("admin", "bench", "embedded"),
            List.of("runtime"),
            List.of("sequence"),
            List.of("stream", "registry", "verify"),
            List.of("ownership"),
            List.of("schema"),
            List.of("json"),
            List.of("recovery"),
            List.of("resume"),
            List.of("lease"),
            List.of("state"),
            List.of("config"),
            List.of("id"));

    private static final Pattern SNOWSTAMP_PACKAGE = Pattern.compile("\\bio\\.snowstamp\\.([a-z]\\w*)\\.");

    @Test
    void shouldImportOnlyDownTheDeclaredLayers() throws IOException {
        Path main = Paths.get("src/main/java/io/snowstamp");
        List<String> wrong = new ArrayList<>();
        List<String> undeclared = new ArrayList<>();
        try (Stream<Path> packages = Files.list(main)) {
            for (Path dir : packages.filter(Files::isDirectory).sorted().collect(Collectors.toList())) {
                String from = dir.getFileName().toString();
                if (layer(from) < 0) {
                    undeclared.add(from);
                    continue;
                }
                for (Path source : javaFiles(dir)) {
                    for (String match : matches(Files.readString(source), SNOWSTAMP_PACKAGE)) {
                        String to = match.substring(match.indexOf("io.snowstamp.") + "io.snowstamp.".length(), match.length() - 1);
                        if (!to.equals(from) && !allowed(from, to)) {
                            wrong.add(source + ":" + match.substring(0, match.indexOf(':')) + " " + from + " -> " + to);
                        }
                    }
                }
            }
        }
        assertThat(undeclared).as("packages missing from ArchitectureTest.LAYERS").isEmpty();
        assertThat(wrong).as("imports against the layering (a package imports only later rows of LAYERS)").isEmpty();
    }

    @Test
    void shouldRefuseSideAndUpwardImports() {
        assertThat(allowed("stream", "resume")).isTrue();
        assertThat(allowed("runtime", "config")).isTrue();
        assertThat(allowed("resume", "stream")).as("upward").isFalse();
        assertThat(allowed("stream", "registry")).as("same row").isFalse();
        assertThat(allowed("recovery", "cli")).isFalse();
        assertThat(allowed("id", "config")).isFalse();
    }

    @Test
    void shouldDescribeEveryPackageInAPackageInfo() throws IOException {
        try (Stream<Path> packages = Files.list(Paths.get("src/main/java/io/snowstamp"))) {
            assertThat(packages.filter(Files::isDirectory).filter(dir -> !Files.exists(dir.resolve("package-info.java")))
                    .map(Path::toString).collect(Collectors.toList())).isEmpty();
        }
    }

    private static boolean allowed(String from, String to) {
        int target = layer(to);
        return target > layer(from);
    }

    private static int layer(String pkg) {
        for (int i = 0; i < LAYERS.size(); i++) {
            if (LAYERS.get(i).contains(pkg)) {
                return i;
            }
        }
        return -1;
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
