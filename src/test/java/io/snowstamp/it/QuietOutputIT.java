package io.snowstamp.it;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Stamper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a new user sees: a first and a second {@code demo} in a fresh directory, then {@code run} on
 * the same embedded broker until SIGTERM — the shaded jar in a child JVM exactly as the quick start
 * runs it — print no ERROR line and no stack trace. The first demo runs with the container image's
 * admin variables, as {@code docker run ... demo} does: no admin server is on in {@code demo}.
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
    void shouldPrintNoErrorAndNoStackTraceOnAFirstAndASecondDemoAndARunOnTheEmbeddedBroker() throws Exception {
        String kafka = work.resolve("kafka").toString();
        // below Linux's ephemeral ports (32768-60999): no server of a test beside this one, on port 0, can take it meanwhile
        int adminPort = 20_000 + new java.util.Random().nextInt(10_000);
        while (listens(adminPort)) {
            adminPort++;
        }
        for (String run : List.of("first", "second")) {
            // operations.md, Admin endpoints: never on in demo, though the image sets SNOWSTAMP_ADMIN_PORT (pom.xml, jib)
            Map<String, String> env = run.equals("first")
                    ? Map.of("SNOWSTAMP_ADMIN_PORT", String.valueOf(adminPort), "SNOWSTAMP_ADMIN_BIND", "0.0.0.0") : Map.of();
            try (ChildJvm demo = ChildJvm.start(work.resolve("logs"), run, List.of(), env, Stamper.FAST_START, "demo",
                    "--events", "300", "--data-dir", kafka, "--set", "state.dir=" + work.resolve("streams"))) {
                while (demo.isAlive()) {
                    assertThat(listens(adminPort)).as(run + " demo listens on SNOWSTAMP_ADMIN_PORT; output:\n" + demo.logs()).isFalse();
                    Thread.sleep(100);
                }
                assertThat(demo.waitFor(240)).as(run + " demo exit code; output:\n" + demo.logs()).isZero();
                assertThat(demo.logs()).doesNotContain("admin server on", "admin: http");
                assertQuiet(run + " demo", demo);
                assertThat(demo.stderr()).contains("its log in " + work.resolve("kafka").toAbsolutePath().resolve("broker.log"));
                assertThat(demo.stdout()).contains("duplicates=0 missing=0 extra=0");
            }
        }
        // the broker's own log went to its file, and the console said where
        Path brokerLog = work.resolve("kafka").resolve("broker.log").toAbsolutePath();
        assertThat(brokerLog).isNotEmptyFile();
        assertThat(Files.readString(brokerLog)).contains("INFO  [", "kafka.server.");
        try (ChildJvm stamper = ChildJvm.start(work.resolve("logs"), "run", List.of(), Stamper.FAST_START, "run",
                "--data-dir", kafka, "--set", "state.dir=" + work.resolve("streams"))) {
            stamper.awaitOutput(Stamper.STARTED, 120);
            // another process finds the run's broker through the data directory
            Cli.Result produce = Cli.run("produce", "--data-dir", kafka, "--count", "200");
            assertThat(produce.exitCode()).as(produce.toString()).isZero();
            // a stamper on a loaded machine can pause for seconds: wait minutes for the 800th record, not the default 5 s
            Cli.Result consume = Cli.run("consume", "--data-dir", kafka, "--topic", "events.stamped", "--max", "800",
                    "--idle-timeout", "3m", "--timeout", "60s");
            assertThat(consume.outLines()).as(consume.toString()).hasSize(800);
            assertThat(stamper.terminate(60)).isIn(0, 143);
            assertQuiet("run", stamper);
        }
    }

    private static boolean listens(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void assertQuiet(String what, ChildJvm child) throws Exception {
        String output = child.stdout() + child.stderr();
        List<String> trouble = output.lines().filter(line -> TROUBLE.matcher(line).find()).toList();
        System.out.printf("%s: %d lines of output, %d on stderr%n", what, output.lines().count(), child.stderr().lines().count());
        assertThat(trouble).as(what + " printed errors; whole output:\n" + output).isEmpty();
    }
}
