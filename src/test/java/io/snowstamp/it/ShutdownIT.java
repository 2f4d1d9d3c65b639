package io.snowstamp.it;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM while records stream in: {@code run} (a child JVM from the shaded jar) commits its
 * in-flight work and stops; a restarted {@code run} stamps the rest; {@code verify} finds every
 * input record stamped exactly once. Run under {@code at_least_once} on purpose: there a stop that
 * did not commit what it had written would show as {@code extra} records (stamped twice, with new
 * IDs), whereas exactly-once would hide an unclean stop by aborting the transaction. And the stop
 * leaves the group at once, not after the session timeout.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(240)
class ShutdownIT extends OnSharedBroker {
    private static final int RECORDS = 20_000;
    @TempDir
    Path work;

    @Test
    void shouldCommitInFlightWorkOnSigtermSoNothingIsLostOrStampedTwice() throws Exception {
        String in = TestBroker.unique("raw");
        String out = TestBroker.unique("stamped");
        String dlq = TestBroker.unique("dlq");
        broker.createTopic(in, 4);
        broker.createTopic(out, 4);
        broker.createTopic(dlq, 1);
        String app = TestBroker.unique("app");
        // the worker registry on, as shipped, in an ID space of the application's own (the broker is shared: see Stamper)
        Stamper.ensureRegistryTopic(broker.bootstrapServers(), "snowstamp-workers");
        String[] args = {"run", "--bootstrap-servers", broker.bootstrapServers(), "--application-id", app, "--set", "id.space=" + app,
                "--state-dir", work.resolve("state").toString(), "--instance-id", "sigterm-1", "--admin-port", "0",
                "--shutdown-timeout", "30s", "--set", "processing.guarantee=at_least_once",
                // the tail guard off: else the restart would skip what an unclean stop left uncommitted (StampedInputs), and
                // this test could not tell a clean stop from one
                "--set", "recovery.tail-guard=false",
                "--set", "input.topic=" + in, "--set", "output.topic=" + out, "--set", "dlq.topic=" + dlq};

        CompletableFuture<Void> load;
        try (ChildJvm first = ChildJvm.start(work.resolve("logs"), "run-1", args)) {
            first.awaitOutput("stamping " + in, 60);
            Http.await(first.adminUrl() + "/health/ready", r -> r.status() == 200, 120);
            load = CompletableFuture.runAsync(() -> produceSteadily(in));
            awaitOutputRecords(out, 2_000, first);
            assertThat(load).as("SIGTERM must come while records still arrive").isNotDone();

            int exit = first.terminate(60);
            String logs = first.logs();
            assertThat(exit).as("a clean stop by SIGTERM exits 0\n" + logs).isZero();
            assertThat(logs).contains("stamper stopping: committing in-flight work", "stamper stopped cleanly")
                    .doesNotContain("did not stop within").doesNotContain("ERROR");
        }
        load.get(120, TimeUnit.SECONDS);
        assertThat(outputRecords(out)).as("the stop came in the middle of the load").isLessThan(RECORDS);

        try (ChildJvm second = ChildJvm.start(work.resolve("logs"), "run-2", args)) {
            second.awaitOutput("stamping " + in, 60);
            Cli.Result verify = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                if (outputRecords(out) >= RECORDS) {
                    verify = Cli.run("verify", "--bootstrap-servers", broker.bootstrapServers(), "--topic", out, "--source", in);
                    if (verify.exitCode() == 0) {
                        break;
                    }
                }
                Thread.sleep(500);
            }
            assertThat(verify).as("the restarted stamper stamped the rest within 120 s\n" + second.logs()).isNotNull();
            assertThat(verify.lastLine()).as(verify + "\n" + second.logs())
                    .isEqualTo("records=" + RECORDS + " duplicates=0 missing=0 extra=0");
            assertThat(second.terminate(60)).isZero();
        }
    }

    /**
     * At-least-once, the tail guard off: records set aside (the lead policy holds them at the start) and stamped after the
     * last commit before a clean stop leave the set-aside store at the stop's own commit, so a restart stamps none of them
     * again. No commit comes between their stamping and the stop (a minute apart); before the end-of-commit release the
     * store kept every one of them (the proof by commit counts needs the task's processing after the commit), and the
     * restart stamped all of them again.
     */
    @Test
    void shouldStampNoRecordSetAsideTwiceAfterACleanStop() throws Exception {
        long records = 300;
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 1);
        NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, records);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "aside-stop")
                .with("processing.guarantee", "at_least_once")
                .with("recovery.tail-guard", "false")
                .settingRecordsAsideAtStart()
                .with("kafka.commit.interval.ms", "60000");
        String changelog = spec.applicationId() + "-pending-records-changelog";

        try (ChildJvm first = spec.start()) {
            first.awaitLog("holding records back", 60);
            Verification stamped = Verification.awaitAllStamped(broker.bootstrapServers(), topics.out(), topics.in(), records,
                    Duration.ofSeconds(60));
            assertThat(stamped.missing()).as(stamped + "\n" + first.logs()).isZero();
            assertThat(StampedRecords.undeleted(broker.bootstrapServers(), changelog)).as("before the stop: set aside")
                    .isNotEmpty();
            assertThat(first.terminate(60)).as(first.logs()).isZero();
        }
        assertThat(StampedRecords.undeleted(broker.bootstrapServers(), changelog)).as("entries left by the clean stop").isEmpty();

        try (ChildJvm second = spec.start()) {
            second.awaitOutput("stamping " + topics.in(), 60);
            Verification verify = Verification.awaitSettled(broker.bootstrapServers(), topics.out(), topics.in(), records,
                    Duration.ofSeconds(30));
            assertThat(verify.summaryLine()).as(second.logs()).isEqualTo(Verification.clean(records));
        }
    }

    /**
     * operations.md, "Failover within seconds": a clean stop leaves the group at once, so each pod of a rolling restart
     * hands its partitions over now. The mechanism, not a time: by the exit of the SIGTERMed instance (2 s of slack for
     * the broker's view) its member is gone from the group; one that did not leave stays the 6 s session timeout.
     */
    @Test
    void shouldLeaveTheGroupAtOnceOnSigterm() throws Exception {
        String app = TestBroker.unique("app");
        Stamper a = Stamper.of(work, broker.bootstrapServers(), app, Stamper.Topics.create(broker.bootstrapServers(), 2), "a");
        try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
             ChildJvm first = a.start(); ChildJvm second = a.instance("b").start()) {
            // b runs a task, as each pod of a rolling restart does (its client id names its instance)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Pattern.compile("-> RUNNING \\(tasks: \\[\\d").matcher(second.stderr()).find()) {
                assertThat(System.nanoTime()).as("b runs a task within 120 s\n" + second.logs()).isLessThan(deadline);
                Thread.sleep(100);
            }
            Predicate<String> isB = clientId -> clientId.startsWith(app + "-b-");
            assertThat(members(admin, app)).as("b is a member").anyMatch(isB);
            assertThat(second.terminate(60)).as(second.logs()).isZero();
            long exited = System.nanoTime();
            while (members(admin, app).stream().anyMatch(isB) && System.nanoTime() - exited < TimeUnit.SECONDS.toNanos(2)) {
                Thread.sleep(100);
            }
            assertThat(members(admin, app)).as("the group's members 2 s after b's exit\n" + second.logs()).noneMatch(isB).hasSize(1);
        }
    }

    /** The client ids of the group's members. */
    private static List<String> members(Admin admin, String app) throws Exception {
        return admin.describeConsumerGroups(List.of(app)).describedGroups().get(app).get(10, TimeUnit.SECONDS)
                .members().stream().map(m -> m.clientId()).toList();
    }

    /** {@link #RECORDS} records at about 4,000 per second: a load that is still running when SIGTERM comes. */
    private static void produceSteadily(String topic) {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < RECORDS; n++) {
                byte[] value = ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, ("user-" + n % 100).getBytes(StandardCharsets.UTF_8), value));
                if (n % 200 == 199) {
                    Thread.sleep(50);
                }
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void awaitOutputRecords(String topic, long atLeast, ChildJvm run) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (outputRecords(topic) < atLeast) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("fewer than " + atLeast + " records stamped within 120 s\n" + run.logs());
            }
            Thread.sleep(100);
        }
    }

    /** Records in the output topic (its end offsets: at-least-once writes no transaction markers). */
    private static long outputRecords(String topic) {
        Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions, Duration.ofSeconds(10)).values().stream().mapToLong(Long::longValue).sum();
        }
    }
}
