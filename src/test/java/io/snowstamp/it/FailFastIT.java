package io.snowstamp.it;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.snowstamp.testing.OneLine.assertNoJavaInternals;
import static io.snowstamp.testing.OneLine.assertOneErrorLine;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every mistake of environment ends in one line, in seconds, with the documented exit code: Kafka
 * not there, a topic not there, a port already taken, a layout change; and a clean stop by SIGTERM
 * exits 0. Bounds are far from the goals (seconds): a shared, loaded machine must not make them flake.
 */
@Tag("integration")
@Timeout(600)
class FailFastIT extends OnSharedBroker {
    /** Far above the preflight's few seconds, far below the minutes of client retries it replaces. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    @TempDir
    Path work;

    /** An address where nothing listens: connections to it are refused. */
    private static String refusedAddress() throws Exception {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return "127.0.0.1:" + socket.getLocalPort();
        }
    }

    private static Cli.Result timed(String... args) {
        long started = System.nanoTime();
        Cli.Result result = Cli.run(args);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(took).as("'%s' took %s\n%s", String.join(" ", args), took, result).isLessThan(BOUND);
        return result;
    }

    @ParameterizedTest
    @ValueSource(strings = {"verify", "consume", "produce --count 3", "topics apply", "run", "recover", "changelog inspect",
            "changelog history", "changelog export --file -", "tags list", "tags create t", "tags set-step t 10", "bench --records 10"})
    void shouldGiveUpWithinSecondsNamingTheAddressWhenNothingListens(String command) throws Exception {
        String address = refusedAddress();
        List<String> args = new ArrayList<>(List.of(command.split(" ")));
        args.addAll(List.of("--bootstrap-servers", address, "--set", "state.dir=" + work.resolve("state")));

        Cli.Result result = timed(args.toArray(String[]::new));

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
        assertOneErrorLine(result.err(), result.toString());
        assertThat(result.err()).as(result.toString()).contains("cannot reach Kafka at " + address, "connection refused");
    }

    /** operations.md: an unknown host fails at once, like a refused connection (RFC 2606: .invalid never resolves). */
    @Test
    void shouldGiveUpWithinSecondsNamingAnUnknownHost() {
        Cli.Result result = timed("verify", "--bootstrap-servers", "no-such-host.invalid:9092");

        assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
        assertOneErrorLine(result.err(), result.toString());
        assertThat(result.err()).contains("cannot reach Kafka at no-such-host.invalid:9092 (no-such-host.invalid:9092: unknown host)");
    }

    @Test
    void shouldGiveUpAfterTimeoutWhenTheAddressAcceptsConnectionsButNoKafkaAnswers() throws Exception {
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(new InetSocketAddress("127.0.0.1", 0), 50);     // accepts (the backlog), never answers
            String address = "127.0.0.1:" + silent.getLocalPort();

            Cli.Result result = timed("verify", "--bootstrap-servers", address, "--timeout", "3s");

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
            assertOneErrorLine(result.err(), result.toString());
            assertThat(result.err()).contains("Kafka at " + address + " did not answer within 3s");
        }
    }

    /** operations.md: without --timeout the broker check's bound is 15 s (a command's own timeout may be minutes). */
    @Test
    void shouldGiveUpAfter15SecondsWithoutATimeoutWhenNoKafkaAnswers() throws Exception {
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(new InetSocketAddress("127.0.0.1", 0), 50);
            String address = "127.0.0.1:" + silent.getLocalPort();
            long started = System.nanoTime();
            Cli.Result result = Cli.run("verify", "--bootstrap-servers", address);
            Duration took = Duration.ofNanos(System.nanoTime() - started);

            assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
            assertOneErrorLine(result.err(), result.toString());
            assertThat(result.err()).contains("Kafka at " + address + " did not answer within 15s");
            assertThat(took).as("the check's 15 s, not a client's minute").isBetween(Duration.ofSeconds(14), Duration.ofSeconds(30));
        }
    }

    @Test
    void shouldSayATopicIsMissingWithinSecondsForEveryCommandThatNeedsOne() {
        String missing = TestBroker.unique("nope");
        for (String[] args : List.of(new String[] {"produce", "--count", "3", "--topic", missing},
                new String[] {"consume", "--topic", missing}, new String[] {"verify", "--topic", missing})) {
            Cli.Result result = timed(Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers()));
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
            assertOneErrorLine(result.err(), result.toString());
            assertThat(result.err()).contains("topic " + missing + " does not exist at " + broker.bootstrapServers());
        }
    }

    @Test
    void shouldNameTheBusyPortOfTheBrokerAndOfTheAdminServer() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = taken.getLocalPort();

            Cli.Result brokerResult = timed("broker", "--port", Integer.toString(port), "--data-dir", work.resolve("kafka").toString());
            assertThat(brokerResult.exitCode()).as(brokerResult.toString()).isEqualTo(1);
            assertOneErrorLine(brokerResult.err(), brokerResult.toString());
            assertThat(brokerResult.err()).contains("port " + port + " on 127.0.0.1 is in use");

            Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 1);
            Cli.Result run = timed("run", "--bootstrap-servers", broker.bootstrapServers(), "--admin-port", Integer.toString(port),
                    "--state-dir", work.resolve("state").toString(), "--set", "input.topic=" + topics.in(),
                    "--set", "output.topic=" + topics.out(), "--set", "dlq.topic=" + topics.dlq());
            assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
            assertOneErrorLine(run.err(), run.toString());
            assertThat(run.err()).contains("port " + port + " on 127.0.0.1 is in use", "--admin-port");
        }
    }

    /** README: input and output must have the same partition count; startup stops with a clear message otherwise. */
    @Test
    @Timeout(120)   // without the check, run would stamp on and never return
    void shouldRefuseToStartWhenInputAndOutputPartitionCountsDiffer() throws Exception {
        String in = TestBroker.unique("raw");
        String out = TestBroker.unique("stamped");
        String dlq = TestBroker.unique("dlq");
        broker.createTopic(in, 2);
        broker.createTopic(out, 3);
        broker.createTopic(dlq, 1);

        Cli.Result run = timed("run", "--bootstrap-servers", broker.bootstrapServers(), "--admin-port", "0",
                "--state-dir", work.resolve("state").toString(), "--set", "input.topic=" + in, "--set", "output.topic=" + out,
                "--set", "dlq.topic=" + dlq, "--set", "id.worker-registry=off");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
        assertOneErrorLine(run.err(), run.toString());
        assertThat(run.err()).as(run.toString()).contains("input topic " + in + " has 2 partitions but output topic " + out
                + " has 3: they must be equal");
    }

    @Test
    void shouldKeepTheClientsRetryNoiseOffTheConsole() throws Exception {
        String address = refusedAddress();
        for (String command : List.of("verify", "produce")) {
            try (ChildJvm child = ChildJvm.start(work.resolve("logs"), command, List.of(), Stamper.FAST_START,
                    command, "--bootstrap-servers", address)) {
                int exit = child.waitFor(BOUND.toSeconds() * 2);    // a JVM start on a loaded machine on top of the bound
                assertThat(exit).as(child.logs()).isEqualTo(1);
                assertOneErrorLine(child.stderr(), child.logs());
                assertThat(child.stderr()).as(child.logs()).doesNotContain("WARN").contains(address);
            }
        }
    }

    @Test
    void shouldExitZeroAfterSigtermOfTheBroker() throws Exception {
        try (ChildJvm child = ChildJvm.start(work.resolve("logs"), "broker", List.of(), Stamper.FAST_START,
                "broker", "--port", "0", "--data-dir", work.resolve("kafka").toString())) {
            child.awaitOutput("bootstrap.servers=", 120);
            assertThat(child.terminate(60)).as(child.logs()).isZero();
        }
    }

    @Test
    void shouldExitZeroAfterSigtermThenRefuseALayoutChangeInOneLine() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        // the worker registry off: with it on, the registry's claim refuses the new layout first (WorkerRegistryIT checks
        // that); this test checks the refusal of the worker state itself, which also guards deployments without the registry
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("fail-fast"), topics, "a")
                .with("id.worker-registry", "off");
        try (ChildJvm first = stamper.start()) {
            broker.produce(topics.in(), 0, 20);
            assertThat(broker.consume(topics.out(), 20, Duration.ofSeconds(120))).hasSize(20);
            int exit = first.terminate(60);
            assertThat(exit).as("a clean stop by SIGTERM exits 0\n" + first.logs()).isZero();
            assertThat(first.logs()).contains("stamper stopped cleanly");
        }
        try (ChildJvm refused = stamper.with("id.preset", "sonyflake").launch()) {
            assertThat(refused.waitFor(180)).as(refused.logs()).isEqualTo(1);
            String err = refused.stderr();
            assertNoJavaInternals(err, refused.logs());
            // the log lines around it (state changes, the shutdown hook's) are the log; the error is one line
            assertThat(err.lines().filter(line -> line.startsWith("error: ")).toList()).as(refused.logs()).singleElement()
                    .satisfies(line -> assertThat(line).startsWith("error: partition ")
                            .contains("refusing to start because IDs of the new layout could equal IDs already issued"));
        }
    }
}
