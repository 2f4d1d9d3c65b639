package io.snowstamp.cli;

import io.snowstamp.testing.Cli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;

import static io.snowstamp.testing.OneLine.assertOneErrorLine;
import static org.assertj.core.api.Assertions.assertThat;

/** Usage errors found before anything talks to Kafka: exit 2 and one line naming what is wrong. */
class UsageErrorsTest {
    @TempDir
    Path work;

    private static Cli.Result usageError(String... args) {
        Cli.Result result = Cli.run(args);
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
        assertOneErrorLine(result.err(), result.toString());
        return result;
    }

    @Test
    void shouldRefuseAWordForAnId() {
        assertThat(usageError("decode", "hello").err()).contains("ID 'hello' is invalid: accepted a decimal number");
        assertThat(usageError("decode", "9223372036854775807", "--set", "id.preset=js-safe").err())
                .contains("is invalid: accepted 0..");
    }

    @Test
    void shouldRefuseANegativeMax() {
        assertThat(usageError("consume", "--max", "-1").err()).contains("--max=-1 is invalid: accepted 0 or more");
    }

    @Test
    void shouldRefuseABootstrapAddressWithoutPortNamingWhereItCameFrom() {
        assertThat(usageError("consume", "--bootstrap-servers", "localhost").err())
                .contains("kafka.bootstrap.servers=localhost is invalid: accepted HOST:PORT", "(from --bootstrap-servers)");
        assertThat(usageError("verify", "--set", "kafka.bootstrap.servers=a:1,b:99999").err()).contains("(from --set)");
        // the forms the Kafka clients accept pass: a protocol prefix, an IPv6 address in brackets
        Cli.Result accepted = Cli.run("decode", "--set", "kafka.bootstrap.servers=SASL_SSL://kafka-1:9093,[::1]:9092", "1");
        assertThat(accepted.exitCode()).as(accepted.toString()).isZero();
    }

    @Test
    void shouldRefuseProducerAcksOtherThanAllInOneLineWithExitTwo() {
        assertThat(usageError("run", "--set", "kafka.acks=0").err())
                .contains("kafka.acks=0 is invalid: accepted all (or -1, the same)", "(from --set)");
        assertThat(usageError("run", "--set", "kafka.producer.acks=1").err()).contains("kafka.producer.acks=1 is invalid");
    }

    @Test
    void shouldRefuseAnUncleanLeaderElectionOnTheStampersTopics() {
        assertThat(usageError("run", "--set", "kafka.topic.unclean.leader.election.enable=true").err())
                .contains("kafka.topic.unclean.leader.election.enable=true is invalid: accepted false (Kafka's default)", "(from --set)");
    }

    @Test
    void shouldNameAMissingFileGivenOnTheCommandLine() {
        assertThat(usageError("produce", "--file", "/no/such/file").err()).contains("--file=/no/such/file is invalid: the file does not exist");
        assertThat(usageError("changelog", "import", "--file", "/no/such/file").err()).contains("--file=/no/such/file");
        assertThat(usageError("consume", "--config", "/no/such/file.properties").err()).contains("--config=/no/such/file.properties");
    }

    @Test
    void shouldRefuseForceOnARecoveryThatHandsNothingOver() {
        assertThat(usageError("recover", "--from-changelog", "orders", "--force", "--apply").err())
                .contains("--force=true is invalid: accepted only with --to-application-id naming another application than orders"
                        + " (it hands over a stale claim of orders in the worker registry)");
        assertThat(usageError("recover", "--to-application-id", "snowstamp", "--force").err()).contains("--force=true is invalid");
    }

    @Test
    void shouldRefuseAPortOutOfRange() {
        assertThat(usageError("broker", "--port", "70000").err()).contains("--port=70000 is invalid: accepted 0..65535");
        assertThat(usageError("run", "--admin-port", "70000").err()).contains("admin.port=70000 is invalid", "(from --admin-port)");
    }

    @Test
    void shouldRefuseAMalformedDurationWithTheOneDurationSyntax() {
        assertThat(usageError("verify", "--timeout", "5x").err()).contains("--timeout=5x is invalid: accepted a duration such as 500ms, 10s");
        assertThat(usageError("consume", "--idle-timeout", "soon").err()).contains("--idle-timeout");
    }

    @Test
    void shouldRefuseAnEpochInTheFutureBeforeStarting() {
        assertThat(usageError("run", "--set", "id.epoch=2099-01-01T00:00:00Z").err())
                .contains("id.epoch=2099-01-01T00:00:00Z is invalid: accepted an epoch not after now", "(from --set)");
    }

    @Test
    void shouldRefuseAnExhaustedLayoutBeforeStarting() {
        assertThat(usageError("demo", "--set", "id.time-bits=30", "--data-dir", work.resolve("kafka").toString()).err())
                .contains("id.time-bits=30 is invalid", "ran out at 2020-01-13T", "(from --set)");
    }

    @Test
    void shouldNameTheEnvironmentOrFileAValueCameFrom() throws Exception {
        Path file = work.resolve("bad.properties");
        Files.writeString(file, "id.worker-offset=many\n");
        assertThat(usageError("decode", "--config", file.toString(), "1").err()).contains("id.worker-offset=many", "(from file " + file + ")");
    }

    @Test
    void shouldPrintTheUsageAndExit2WhenNoCommandIsGiven() {
        Cli.Result bare = Cli.run();
        assertThat(bare.exitCode()).isEqualTo(2);
        assertThat(bare.err()).startsWith("Usage: snowstamp");
        assertThat(bare.out()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"topics", "changelog", "tags"})
    void shouldPrintTheUsageAndExit2WhenASubcommandIsMissing(String group) {
        Cli.Result missing = Cli.run(group);
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("Usage: snowstamp " + group);
        assertThat(missing.out()).isEmpty();
    }

    @Test
    void shouldAddTheStackTraceOnlyWithVerbose() {
        Cli.Result quiet = Cli.run("decode", "--set", "id.epoch=yesterday", "1");
        assertOneErrorLine(quiet.err(), quiet.toString());
        Cli.Result verbose = Cli.run("decode", "--verbose", "--set", "id.epoch=yesterday", "1");
        assertThat(verbose.exitCode()).isEqualTo(2);
        assertThat(verbose.err()).startsWith(quiet.err().strip()).contains("\tat io.snowstamp.config.");
    }
}
