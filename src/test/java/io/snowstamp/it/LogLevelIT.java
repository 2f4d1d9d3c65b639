package io.snowstamp.it;

import io.snowstamp.testing.ChildJvm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.snowstamp.testing.OneLine.assertOneErrorLine;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, Logs: snowstamp logs at INFO unless {@code SNOWSTAMP_LOG_LEVEL} says otherwise, and
 * {@code SNOWSTAMP_LOG_LEVEL=DEBUG} prints stack traces. A child JVM, because the variable is read when Logback
 * configures itself (this JVM's Logback is configured already). The command is an error found before anything
 * talks to Kafka (a configuration value no parser accepts), so no broker is needed.
 */
@Tag("integration")
@Timeout(120)
class LogLevelIT {
    @TempDir
    Path work;

    private ChildJvm failing(String name, Map<String, String> env) throws Exception {
        ChildJvm child = ChildJvm.start(work, name, List.of(), env, List.of(), "decode", "--set", "id.epoch=yesterday", "1");
        assertThat(child.waitFor(60)).as(child.logs()).isEqualTo(2);
        return child;
    }

    @Test
    void shouldPrintDebugLinesWithTheStackTraceOnlyWhenTheLevelIsDebug() throws Exception {
        try (ChildJvm quiet = failing("default", Map.of())) {
            // by default: the one line a person reads, no DEBUG line, no stack trace
            assertOneErrorLine(quiet.stderr(), quiet.logs());
        }
        try (ChildJvm debug = failing("debug", Map.of("SNOWSTAMP_LOG_LEVEL", "DEBUG"))) {
            String stderr = debug.stderr();
            assertThat(stderr.lines().findFirst()).as(debug.logs()).hasValueSatisfying(line -> assertThat(line).startsWith("error: "));
            assertThat(stderr).as(debug.logs()).containsPattern("(?m)^\\S+ DEBUG Main - stack trace of the error above$")
                    .contains("\tat io.snowstamp.config.");
        }
    }
}
