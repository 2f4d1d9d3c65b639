package io.snowstamp.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The programs of Debian's {@code prometheus} package ({@code prometheus}, {@code promtool}) found on the {@code PATH}.
 * Where one is missing the calling test is skipped with one line ({@link Assumptions}); under CI ({@code CI} set, as
 * {@code .ci/run} runs) it fails instead: {@code .ci/run} installs the package.
 */
public final class PrometheusTools {
    private PrometheusTools() {
    }

    /** The executable {@code name} (e.g. {@code promtool}); skips the test, or fails it under CI, where it is missing. */
    public static Path require(String name) {
        Optional<Path> found = Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(dir -> !dir.isEmpty()).map(dir -> Path.of(dir, name)).filter(Files::isExecutable).findFirst();
        if (found.isPresent()) {
            return found.get();
        }
        String missing = name + " is not installed: apt-get install prometheus";
        if (System.getenv("CI") != null) {
            throw new AssertionError(missing + " (.ci/run installs it)");
        }
        Assumptions.abort(missing);
        throw new IllegalStateException("unreachable");
    }
}
