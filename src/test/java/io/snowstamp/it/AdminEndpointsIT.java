package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.admin.AdminServer;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.PrometheusText;
import io.snowstamp.testing.PrometheusText.Sample;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admin endpoints over real HTTP against running stampers on a real broker: readiness flips
 * after restore (also after the local state was wiped), /metrics counts exactly what was stamped,
 * /state matches {@code changelog inspect}, and /state spans every instance of the application
 * (interactive-query metadata under the streams rebalance protocol).
 */
@Tag("integration")
@Timeout(240)
class AdminEndpointsIT extends OnSharedBroker {
    private static final int RECORDS = 2_000;
    @TempDir
    Path work;

    /** Topics and an application id no other test uses. */
    private record App(String id, String in, String out, String dlq) {
        static App create() throws Exception {
            return create(4);
        }

        static App create(int partitions) throws Exception {
            App app = new App(TestBroker.unique("app"), TestBroker.unique("raw"), TestBroker.unique("stamped"), TestBroker.unique("dlq"));
            broker.createTopic(app.in, partitions);
            broker.createTopic(app.out, partitions);
            broker.createTopic(app.dlq, 1);
            return app;
        }

        String changelog() {
            return id + "-worker-state-changelog";
        }
    }

    /** A stamper with its admin server, as {@code run --admin-port 0} wires them. */
    private record Instance(SnowstampConfig config, StreamsRunner runner, AdminServer admin) implements AutoCloseable {
        String url(String path) {
            return "http://127.0.0.1:" + admin.getPort() + path;
        }

        @Override
        public void close() {
            runner.close(Duration.ofSeconds(30));
            admin.close();
        }
    }

    private Instance start(App app, String name) {
        return start(app, name, "classic");
    }

    /** @param groupProtocol Kafka Streams' {@code group.protocol}: {@code classic} (its 4.3 default) or {@code streams} (KIP-1071) */
    private Instance start(App app, String name, String groupProtocol) {
        return start(app, name, groupProtocol, Map.of());
    }

    private Instance start(App app, String name, String groupProtocol, Map<String, String> more) {
        Map<String, String> settings = new TreeMap<>(Map.of(
                "kafka.bootstrap.servers", broker.bootstrapServers(), "application.id", app.id,
                "input.topic", app.in, "output.topic", app.out, "dlq.topic", app.dlq,
                "state.dir", work.resolve("state").toString(), "instance.id", name, "admin.port", "0"));
        settings.put("kafka.group.protocol", groupProtocol);
        settings.put("id.worker-registry", "off");     // several applications with the default offset on one broker
        settings.putAll(more);
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), settings);
        StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
        AdminServer admin = AdminServer.start(config, runner, System::currentTimeMillis);
        runner.advertise(admin.advertisedAddress());
        Instance instance = new Instance(config, runner, admin);
        Http.Response before = Http.get(instance.url("/health/ready"));
        assertThat(before.status()).as("not ready before Kafka Streams starts: %s", before).isEqualTo(503);
        runner.start();
        return instance;
    }

    private static JsonNode awaitReady(Instance instance) throws InterruptedException {
        JsonNode ready = Http.await(instance.url("/health/ready"), r -> r.status() == 200, 120).json();
        assertThat(ready.get("status").asText()).isEqualTo("ready");
        assertThat(ready.get("state").asText()).isEqualTo("RUNNING");
        assertThat(Http.get(instance.url("/health/live")).status()).isEqualTo(200);
        return ready;
    }

    private static List<Sample> metrics(Instance instance) {
        Http.Response response = Http.get(instance.url("/metrics"));
        assertThat(response.status()).isEqualTo(200);
        return PrometheusText.parse(response.body());
    }

    @Test
    void shouldReportReadinessMetricsAndStateOfARunningStamper() throws Exception {
        App app = App.create();
        try (Instance instance = start(app, "admin-1")) {
            JsonNode ready = awaitReady(instance);
            assertThat(ready.get("partitions")).hasSize(4);

            broker.produce(app.in, 0, RECORDS);
            assertThat(broker.consume(app.out, RECORDS, Duration.ofSeconds(120))).hasSize(RECORDS);

            // every stamped record is committed, so the counters already include it
            List<Sample> samples = metrics(instance);
            assertThat(PrometheusText.sum(samples, "snowstamp_ids_issued_total")).isEqualTo(RECORDS);
            assertThat(PrometheusText.named(samples, "snowstamp_ids_issued_total")).hasSize(4)
                    .allSatisfy(s -> assertThat(s.labels().get("worker")).isEqualTo(s.labels().get("partition")));
            assertThat(PrometheusText.named(samples, "snowstamp_clock_lead_seconds")).hasSize(4)
                    .allSatisfy(s -> assertThat(s.value()).as("lead of an idle partition: behind the clock, by less than"
                            + " the test's duration").isBetween(-240.0, 10.0));
            assertThat(PrometheusText.sum(samples, "snowstamp_dead_letters_total")).isZero();
            assertThat(PrometheusText.sum(samples, "snowstamp_held_back_records")).isZero();
            assertThat(PrometheusText.sum(samples, "snowstamp_excess_lead_events_total")).isZero();
            assertThat(PrometheusText.named(samples, "snowstamp_sequence_borrowed_units_total")).hasSize(4);
            assertThat(PrometheusText.named(samples, "snowstamp_clock_behind_events_total")).hasSize(4);
            assertThat(PrometheusText.named(samples, "snowstamp_tail_guard_duration_seconds")).hasSize(4)
                    .allSatisfy(s -> assertThat(s.value()).isGreaterThanOrEqualTo(0));
            // every series carries the application id (operations.md: deployments told apart in the alert rules)
            assertThat(PrometheusText.named(samples, "snowstamp_resumes_total")).singleElement().satisfies(s -> {
                assertThat(s.labels()).containsEntry("source", "clock").containsKey("application").hasSize(2);
                assertThat(s.value()).isEqualTo(4);
            });
            assertThat(PrometheusText.named(samples, "snowstamp_resume_source")).hasSize(4)
                    .allSatisfy(s -> assertThat(s.labels()).containsEntry("source", "clock"));
            assertThat(PrometheusText.sum(samples, "snowstamp_tasks")).isEqualTo(4);
            assertThat(PrometheusText.sum(samples, "snowstamp_ready")).isEqualTo(1);
            // the lease reader's rounds (operations.md; the SnowstampLeaseReaderBehind runbook reads them): an idle
            // instance's reader keeps up, its rounds short and no held partition behind
            assertThat(PrometheusText.named(samples, "snowstamp_lease_reader_round_seconds")).singleElement()
                    .satisfies(s -> assertThat(s.value()).isPositive().isLessThan(5));
            assertThat(PrometheusText.sum(samples, "snowstamp_lease_reader_behind_partitions")).isZero();
            assertThat(PrometheusText.named(samples, "snowstamp_lease_reader_behind_partitions")).hasSize(1);
            assertThat(PrometheusText.sum(samples, "kafka_stream_thread_process_total"))
                    .as("Kafka Streams' own metrics, through Micrometer's binder").isGreaterThanOrEqualTo(RECORDS);

            assertStateMatchesTheChangelog(instance, app, 1);
            assertStateShowsTheRunningTasks(instance, RECORDS);
        }
    }

    /**
     * The fields of /state the changelog cannot tell (operations.md, Admin endpoints): the running tasks' newest IDs,
     * lead and resume decisions, the heartbeat, this instance's lease reader, worker offset and ID space. One instance
     * with all four partitions, idle after stamping {@code stamped} records.
     */
    private static void assertStateShowsTheRunningTasks(Instance instance, long stamped) {
        JsonNode state = Http.get(instance.url("/state")).json();
        java.time.Instant at = instant(state.get("at"));
        IdLayout layout = instance.config().ids().layout();

        assertThat(state.get("workerOffset").asLong()).as("the default id.worker-offset").isZero();
        assertThat(state.has("idSpace")).as("present, null with the worker registry off: %s", state).isTrue();
        assertThat(state.get("idSpace").isNull()).isTrue();
        JsonNode reader = state.get("leaseReader");
        assertThat(reader.get("leasesHeld").asInt()).as("one lease per partition: %s", reader).isEqualTo(4);
        assertThat(reader.get("behindPartitions").asInt()).as("%s", reader).isBetween(0, 4);
        assertThat(reader.get("lastRoundMs").asLong()).as("%s", reader).isBetween(0L, 30_000L);
        assertThat(reader.get("oldestConfirmationMs").asLong()).as("%s", reader).isBetween(0L, 30_000L);

        long issued = 0;
        for (JsonNode partition : state.get("partitions")) {
            int p = partition.get("partition").asInt();
            long lastId = partition.get("lastId").asLong();
            long newestId = partition.get("newestId").asLong();
            // the running task knows what it issued since the last state write: never behind the store
            assertThat(newestId).as("partition %d: %s", p, partition).isPositive();
            if (lastId >= 0) {
                assertThat(newestId).as("partition %d: %s", p, partition).isGreaterThanOrEqualTo(lastId);
            }
            DecodedId newest = layout.decode(newestId);
            assertThat(newest.worker()).as("partition %d", p).isEqualTo(p);
            // idle since its last stamp: its lead is how far that ID's time is behind the clock (within the test's span)
            assertThat(partition.get("leadMillis").asLong()).as("partition %d: %s", p, partition)
                    .isBetween(-240_000L, 10_000L)
                    .isEqualTo(newest.wallMillis() - at.toEpochMilli());
            java.time.Instant heartbeat = instant(partition.get("heartbeatAt"));
            assertThat(heartbeat).as("partition %d: %s", p, partition).isNotNull()
                    .isAfterOrEqualTo(instant(partition.get("acquiredAt"))).isBeforeOrEqualTo(at);
            JsonNode resume = partition.get("resume");
            assertThat(resume).as("partition %d: the running task's resume decision: %s", p, partition).isNotNull();
            assertThat(resume.get("source").asText()).as("a first start: nothing stored, nothing in the output").isEqualTo("clock");
            assertThat(resume.get("above").asLong()).isLessThan(newestId);
            assertThat(resume.get("tailGuardMillis").asLong()).isGreaterThanOrEqualTo(0);
            issued += partition.get("issuedSinceTaskStart").asLong();
        }
        assertThat(issued).as("every record stamped once, by the tasks running now").isEqualTo(stamped);
    }

    @Test
    void shouldShowPerPartitionHowLongAgoItLastStampedAndWhetherItsInstanceRebalances() throws Exception {
        App app = App.create();
        try (Instance instance = start(app, "stall-1")) {
            // an instance's first assignment is a rebalance: it shows while it lasts (seconds: join, restore, tail guard)
            Http.await(instance.url("/metrics"), r -> PrometheusText.sum(PrometheusText.parse(r.body()), "snowstamp_rebalancing") == 1, 60);
            awaitReady(instance);
            broker.produce(app.in, 0, RECORDS);
            assertThat(broker.consume(app.out, RECORDS, Duration.ofSeconds(120))).hasSize(RECORDS);
            List<Sample> stamped = metrics(instance);
            assertThat(PrometheusText.sum(stamped, "snowstamp_rebalancing")).isZero();
            assertThat(PrometheusText.named(stamped, "snowstamp_partition_rebalancing")).hasSize(4).allSatisfy(s -> assertThat(s.value()).isZero());
            Map<String, Double> justStamped = sinceLastStamp(stamped);
            assertThat(justStamped).hasSize(4).allSatisfy((partition, seconds) -> assertThat(seconds).isBetween(0.0, 60.0));
            // the README's alert joins the input's consumer lag, per partition: it must exist under that name
            // (Micrometer's binder picks up new Kafka metrics every 10 s)
            Http.await(instance.url("/metrics"), r -> PrometheusText.named(PrometheusText.parse(r.body()),
                    "kafka_consumer_fetch_manager_records_lag").stream().anyMatch(s -> app.in.equals(s.labels().get("topic"))
                    && s.labels().containsKey("partition")), 60);

            // nothing more arrives: the time since the last stamp grows, in /metrics and in /state
            Thread.sleep(3_000);
            Map<String, Double> later = sinceLastStamp(metrics(instance));
            later.forEach((partition, seconds) -> assertThat(seconds).as("partition %s", partition)
                    .isGreaterThanOrEqualTo(justStamped.get(partition) + 2.5));
            JsonNode state = Http.get(instance.url("/state")).json();
            assertThat(state.get("partitions")).hasSize(4).allSatisfy(p -> {
                assertThat(p.get("rebalancing").asBoolean()).isFalse();
                assertThat(p.get("millisSinceLastStamp").asLong()).isGreaterThanOrEqualTo(2_500);
                assertThat(p.get("lastStampedAt").asText()).endsWith("Z");
            });
        }
    }

    private static Map<String, Double> sinceLastStamp(List<Sample> samples) {
        Map<String, Double> seconds = new TreeMap<>();
        PrometheusText.named(samples, "snowstamp_since_last_stamp_seconds").forEach(s -> seconds.put(s.labels().get("partition"), s.value()));
        return seconds;
    }

    @Test
    void shouldBecomeReadyOnlyAfterRestoringWipedStateFromTheChangelog() throws Exception {
        App app = App.create();
        try (Instance first = start(app, "admin-restore")) {
            awaitReady(first);
            broker.produce(app.in, 0, RECORDS);
            assertThat(broker.consume(app.out, RECORDS, Duration.ofSeconds(120))).hasSize(RECORDS);
        }
        // the machine lost its disk: Kafka Streams must rebuild worker-state from the changelog before the tasks start
        // (the worker state lives in memory, so a stamper without a pause buffer may have written no state directory)
        if (Files.exists(work.resolve("state"))) {
            try (var files = Files.walk(work.resolve("state"))) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
        try (Instance second = start(app, "admin-restore")) {
            awaitReady(second);
            List<Sample> samples = metrics(second);
            assertThat(PrometheusText.named(samples, "snowstamp_restore_records")).hasSize(4)
                    .allSatisfy(s -> assertThat(s.value()).as("changelog records restored for partition %s",
                            s.labels().get("partition")).isPositive());
            assertThat(PrometheusText.named(samples, "snowstamp_restore_duration_seconds")).hasSize(4);
            assertThat(PrometheusText.named(samples, "snowstamp_resume_source")).hasSize(4)
                    .allSatisfy(s -> assertThat(s.labels().get("source")).as("a documented source (what proves the restore:"
                            + " the records restored above and epoch 2 below, the first run's lease + 1)")
                            .isIn("state.lastId", "state.reservedUntil", "tail", "clock"));
            assertThat(PrometheusText.sum(samples, "snowstamp_ids_issued_total")).as("a new process counts from 0").isZero();
            assertStateMatchesTheChangelog(second, app, 2);
        }
    }

    /** operations.md: ready answers 503 while the instance stops, from the stop's first step (the last IDs' wait) on. */
    @Test
    void shouldAnswerNotReadyWhileStopping() throws Exception {
        App app = App.create();
        try (Instance instance = start(app, "admin-stop")) {
            awaitReady(instance);
            Thread stopper = new Thread(() -> instance.runner().close(Duration.ofSeconds(30)));
            stopper.start();
            Http.Response stopping = Http.await(instance.url("/health/ready"), r -> r.status() == 503, 30);
            assertThat(stopping.json().get("reason").asText()).isIn("stopping", "Kafka Streams is PENDING_SHUTDOWN, not RUNNING",
                    "Kafka Streams is NOT_RUNNING, not RUNNING");
            assertThat(Http.get(instance.url("/health/ready")).status()).as("and stays so").isEqualTo(503);
            stopper.join(60_000);
        }
    }

    @ParameterizedTest(name = "group.protocol={0}")
    @ValueSource(strings = {"classic", "streams"})
    void shouldShowThePartitionsOfEveryInstanceInState(String groupProtocol) throws Exception {
        App app = App.create();
        // design.md: under the streams protocol the start warns that a commit without offsets goes unchecked
        ch.qos.logback.classic.Logger runnerLog = io.snowstamp.testing.Logback.logger(StreamsRunner.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged = new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        runnerLog.addAppender(logged);
        try (Instance a = start(app, "admin-a", groupProtocol); Instance b = start(app, "admin-b", groupProtocol)) {
            runnerLog.detachAppender(logged);
            if (groupProtocol.equals("streams")) {
                assertThat(logged.list).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                        .anySatisfy(line -> assertThat(line).startsWith("group.protocol=streams: a commit of records without input offsets"));
            }
            awaitReady(a);
            awaitReady(b);
            // the rebalance that spreads the partitions may still be on its way: wait for two owners
            JsonNode state = Http.await(a.url("/state"), r -> r.status() == 200 && owners(r.json()).size() == 2
                    && r.json().get("partitions").size() == 4, 120).json();

            assertThat(state.has("notes")).as(state.toPrettyString()).isFalse();
            assertThat(state.get("partitions")).extracting(p -> p.get("partition").asInt()).containsExactly(0, 1, 2, 3);
            assertThat(owners(state)).containsExactlyInAnyOrder("admin-a", "admin-b");
            for (JsonNode partition : state.get("partitions")) {
                Instance owner = partition.get("instance").asText().equals("admin-a") ? a : b;
                assertThat(partition.get("server").asText()).isEqualTo(owner.admin().advertisedAddress());
                assertThat(partition.get("holder").asText()).startsWith(partition.get("instance").asText() + "#");
            }
            assertThat(state.get("instances")).hasSize(2);
            JsonNode fromB = Http.await(b.url("/state"), r -> r.status() == 200 && owners(r.json()).size() == 2, 60).json();
            assertThat(fromB.get("partitions")).extracting(p -> p.get("partition").asInt()).containsExactly(0, 1, 2, 3);
            JsonNode localOnly = Http.get(a.url("/state?local=true")).json();
            assertThat(owners(localOnly)).containsExactly("admin-a");
        }
    }

    /**
     * operations.md: an instance whose /state cannot be read (here: its admin server stopped while it still stamps) is
     * listed with an {@code error} entry; the partitions of the instances that answer are still shown.
     */
    @Test
    void shouldListAnInstanceWhoseStateCannotBeReadWithAnError() throws Exception {
        App app = App.create();
        try (Instance a = start(app, "admin-up"); Instance b = start(app, "admin-gone")) {
            awaitReady(a);
            awaitReady(b);
            Http.await(a.url("/state"), r -> r.status() == 200 && owners(r.json()).size() == 2, 120);
            String unreachable = b.admin().advertisedAddress();
            b.admin().close();
            JsonNode state = Http.get(a.url("/state")).json();
            JsonNode gone = null;
            for (JsonNode instance : state.get("instances")) {
                if (instance.path("server").asText().equals(unreachable)) {
                    gone = instance;
                }
            }
            assertThat(gone).as("the unreachable instance is listed: %s", state.toPrettyString()).isNotNull();
            assertThat(gone.path("error").asText()).as(state.toPrettyString()).startsWith("cannot read its /state: ");
            assertThat(gone.get("assigned")).as("what Kafka Streams says it holds").isNotEmpty();
            assertThat(owners(state)).as("the partitions of the instance that answers").containsExactly("admin-up");
        }
    }

    /** operations.md: {@code /health/live} answers 503 with the reason once Kafka Streams died; here a refused layout change. */
    @Test
    void shouldAnswerLive503WithTheReasonOnceKafkaStreamsDied() throws Exception {
        App app = App.create(1);
        try (Instance first = start(app, "live-1")) {
            awaitReady(first);
            broker.produce(app.in, 0, 20);
            assertThat(broker.consume(app.out, 20, Duration.ofSeconds(120))).hasSize(20);
        }
        try (Instance refused = start(app, "live-1", "classic", Map.of("id.preset", "sonyflake"))) {
            Http.Response live = Http.await(refused.url("/health/live"), r -> r.status() != 200, 120);
            assertThat(live.status()).as("%s", live).isEqualTo(503);
            assertThat(live.json().get("status").asText()).isEqualTo("down");
            assertThat(live.json().get("reason").asText())
                    .contains("refusing to start because IDs of the new layout could equal IDs already issued");
            assertThat(Http.get(refused.url("/health/ready")).status()).isEqualTo(503);
        }
    }

    /**
     * operations.md: {@code /health/ready} is 200 only once every task here has restored its state. The restore is made
     * long on purpose (copies of each partition's newest state in its changelog, all read back before the task starts):
     * every answer is 503 until then, and the first 200 comes after every partition's restore has ended.
     */
    @Test
    void shouldAnswerReady503UntilEveryPartitionHasRestored() throws Exception {
        App app = App.create(2);
        try (Instance first = start(app, "restore-1")) {
            awaitReady(first);
            broker.produce(app.in, 0, 20);
            assertThat(broker.consume(app.out, 20, Duration.ofSeconds(120))).hasSize(20);
        }
        int copies = 150_000;
        copyNewestStates(app.changelog(), copies);
        try (Instance second = start(app, "restore-1")) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            int notReady = 0;
            Http.Response ready;
            while ((ready = Http.get(second.url("/health/ready"))).status() != 200 && System.nanoTime() < deadline) {
                assertThat(ready.status()).as("%s", ready).isEqualTo(503);
                notReady++;
                Thread.sleep(20);
            }
            assertThat(ready.status()).as("%s", ready).isEqualTo(200);
            // the restores ended before the first 200: every partition's is complete, each with every copy read back
            List<Sample> restored = PrometheusText.named(metrics(second), "snowstamp_restore_records");
            assertThat(restored).as("restores ended when ready said 200").hasSize(2)
                    .allSatisfy(s -> assertThat(s.value()).isGreaterThanOrEqualTo(copies));
            assertThat(notReady).as("503 answers while restoring").isPositive();
        }
    }

    /**
     * operations.md: a partition that moved here from a live owner waits out that owner's lease term before its first
     * ID; {@code /health/ready} answers 503 naming it meanwhile, although its task has restored and started.
     */
    @Test
    void shouldAnswerReady503WhileAPartitionWaitsForItsLease() throws Exception {
        App app = App.create(2);
        try (Instance a = start(app, "lease-a")) {
            awaitReady(a);
            try (Instance b = start(app, "lease-b")) {
                // b gets a partition a held until now: its task starts, then waits out a's term (1.5 s)
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                List<String> reasons = new java.util.ArrayList<>();
                Http.Response ready;
                while (((ready = Http.get(b.url("/health/ready"))).status() != 200 || ready.json().get("partitions").isEmpty())
                        && System.nanoTime() < deadline) {
                    if (ready.status() == 503) {
                        reasons.add(ready.json().path("reason").asText());
                    }
                    Thread.sleep(20);
                }
                assertThat(ready.status()).as("%s", ready).isEqualTo(200);
                assertThat(b.runner().taskStarts().held()).as("a task's input was held while its lease waited").isPositive();
                assertThat(reasons).as("503 while the moved partition waited for its lease")
                        .anyMatch(reason -> reason.matches("partitions \\[\\d+] wait for their lease \\(the previous owner's term\\)"));
            }
        }
    }

    /** operations.md: an instance with no partition (more instances than partitions) is ready: a healthy spare. */
    @Test
    void shouldAnswerReady200ForAnInstanceWithNoPartition() throws Exception {
        App app = App.create(1);
        try (Instance a = start(app, "spare-a"); Instance b = start(app, "spare-b")) {
            // once the group settled, one holds the partition and the other none; both ready
            JsonNode readyA = null;
            JsonNode readyB = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                Http.Response ra = Http.get(a.url("/health/ready"));
                Http.Response rb = Http.get(b.url("/health/ready"));
                if (ra.status() == 200 && rb.status() == 200 && ra.json().get("partitions").size() + rb.json().get("partitions").size() == 1) {
                    readyA = ra.json();
                    readyB = rb.json();
                    break;
                }
                Thread.sleep(200);
            }
            assertThat(readyA).as("both ready, one partition between them").isNotNull();
            JsonNode spare = readyA.get("partitions").isEmpty() ? readyA : readyB;
            assertThat(spare.get("status").asText()).isEqualTo("ready");
            assertThat(spare.get("state").asText()).isEqualTo("RUNNING");
            assertThat(spare.get("partitions")).isEmpty();
        }
    }

    /** Appends {@code copies} copies of each changelog partition's newest record: a long restore, of valid states only. */
    private static void copyNewestStates(String changelog, int copies) {
        Map<Integer, ConsumerRecord<byte[], byte[]>> newest = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> record : broker.consume(changelog, Integer.MAX_VALUE, Duration.ofSeconds(5))) {
            newest.put(record.partition(), record);
        }
        assertThat(newest).as("a state per partition in %s", changelog).hasSize(2);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int i = 0; i < copies; i++) {
                for (ConsumerRecord<byte[], byte[]> record : newest.values()) {
                    producer.send(new ProducerRecord<>(changelog, record.partition(), record.key(), record.value(), record.headers()));
                }
            }
            producer.flush();
        }
    }

    private static Set<String> owners(JsonNode state) {
        Set<String> owners = new HashSet<>();
        state.get("partitions").forEach(p -> owners.add(p.get("instance").asText()));
        return owners;
    }

    /**
     * /state agrees with {@code changelog inspect} (a plain read_committed read of the changelog) on
     * every partition. The store can be a commit ahead of the changelog (a heartbeat just wrote), so
     * the comparison is retried until both settle.
     */
    private static void assertStateMatchesTheChangelog(Instance instance, App app, long epoch) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<Integer, JsonNode> changelog;
        JsonNode state;
        do {
            changelog = inspect(app);
            state = Http.get(instance.url("/state")).json();
            if (matches(state, changelog)) {
                break;
            }
            Thread.sleep(500);
        } while (System.nanoTime() < deadline);

        assertThat(changelog).hasSize(4);
        assertThat(state.get("partitions")).hasSize(4);
        for (JsonNode partition : state.get("partitions")) {
            int p = partition.get("partition").asInt();
            JsonNode stored = changelog.get(p);
            assertThat(partition.get("worker").asLong()).isEqualTo(stored.get("workerId").asLong()).isEqualTo(p);
            assertThat(partition.get("epoch").asLong()).isEqualTo(stored.get("epoch").asLong()).isEqualTo(epoch);
            assertThat(partition.get("holder").asText()).isEqualTo(stored.get("holder").asText());
            // times compared as instants: the state view writes Instant.toString() ("...:40Z" when the millisecond
            // is 0), changelog inspect always three fraction digits ("...:40.000Z")
            assertThat(instant(partition.get("acquiredAt"))).isEqualTo(instant(stored.get("acquiredAt")));
            assertThat(partition.get("lastId").asLong()).isEqualTo(stored.get("lastId").asLong());
            assertThat(partition.get("reservation").get("reservedUntil").asLong()).isEqualTo(stored.get("reservedUntil").asLong());
            assertThat(instant(partition.get("reservation").get("until"))).isEqualTo(instant(stored.get("reservedUntilTime")));
            if (stored.get("lastId").asLong() < 0) {
                // no write named a last ID yet (under exactly-once with the tail guard only reservations, heartbeats and a
                // clean stop do): nothing to decode
                assertThat(partition.get("lastIdDecoded") == null || partition.get("lastIdDecoded").isNull()).as("%s", partition).isTrue();
                continue;
            }
            DecodedId decoded = instance.config().ids().layout().decode(stored.get("lastId").asLong());
            assertThat(instant(partition.get("lastIdDecoded").get("time")))
                    .isEqualTo(decoded.instant()).isEqualTo(instant(stored.get("lastIdTime")));
            assertThat(partition.get("lastIdDecoded").get("worker").asLong()).isEqualTo(p);
            assertThat(partition.get("lastIdDecoded").get("sequence").asLong()).isEqualTo(decoded.sequence());
        }
    }

    /** An ISO-8601 time of either writer as an instant; null for a JSON null. */
    private static java.time.Instant instant(JsonNode time) {
        return time == null || time.isNull() ? null : java.time.Instant.parse(time.asText());
    }

    private static boolean matches(JsonNode state, Map<Integer, JsonNode> changelog) {
        if (state.get("partitions").size() != changelog.size()) {
            return false;
        }
        for (JsonNode partition : state.get("partitions")) {
            JsonNode stored = changelog.get(partition.get("partition").asInt());
            if (stored == null || stored.get("epoch").asLong() != partition.get("epoch").asLong()
                    || stored.get("lastId").asLong() != partition.get("lastId").asLong()
                    || stored.get("reservedUntil").asLong() != partition.get("reservation").get("reservedUntil").asLong()) {
                return false;
            }
        }
        return true;
    }

    /** {@code snowstamp changelog inspect --format json}: the newest committed state of every partition. */
    private static Map<Integer, JsonNode> inspect(App app) {
        Cli.Result inspect = Cli.run("changelog", "inspect", "--bootstrap-servers", broker.bootstrapServers(),
                "--application-id", app.id, "--format", "json");
        assertThat(inspect.exitCode()).as(inspect.toString()).isZero();
        Map<Integer, JsonNode> newest = new TreeMap<>();
        ObjectMapper json = new ObjectMapper();
        for (String line : inspect.outLines()) {
            try {
                JsonNode node = json.readTree(line);
                newest.put(node.get("partition").asInt(), node);
            } catch (Exception e) {
                throw new AssertionError("not a JSON line: " + line, e);
            }
        }
        return newest;
    }
}
