package io.snowstamp.it;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Stamper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a new user sees: a first and a second {@code demo} in a fresh directory, the shaded jar in a
 * child JVM exactly as the quick start runs it, print no ERROR line and no stack trace.
 */
@Tag("integration")
@Timeout(300)
class QuietOutputIT {
    /** A logged ERROR (text or JSON format) or any line of a Java stack trace. */
    private static final Pattern TROUBLE = Pattern.compile(
            " ERROR |\"level\":\"ERROR\"|^\\s+at [\\w$.]+\\(|^Caused by: |Exception: |^\\s+\\.\\.\\. \\d+ more");

    @TempDir
    Path work;

    @Test
    void shouldPrintNoErrorAndNoStackTraceOnAFirstAndASecondDemo() throws Exception {
        for (String run : List.of("first", "second")) {
            try (ChildJvm demo = ChildJvm.start(work.resolve("logs"), run, List.of(), Stamper.FAST_START, "demo",
                    "--events", "300", "--data-dir", work.resolve("kafka").toString(),
                    "--set", "state.dir=" + work.resolve("streams"))) {
                assertThat(demo.waitFor(240)).as(run + " demo exit code; output:\n" + demo.logs()).isZero();
                String output = demo.stdout() + demo.stderr();
                List<String> trouble = output.lines().filter(line -> TROUBLE.matcher(line).find()).toList();
                System.out.printf("%s demo: %d lines of output, %d on stderr%n", run, output.lines().count(),
                        demo.stderr().lines().count());
                assertThat(trouble).as(run + " demo printed errors; whole output:\n" + output).isEmpty();
                assertThat(demo.stdout()).contains("duplicates=0 missing=0 extra=0");
            }
        }
    }
}
