package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.id.IdLayout;
import io.snowstamp.registry.Claim;
import io.snowstamp.registry.ClaimCodec;
import io.snowstamp.registry.ClaimRefusedException;
import io.snowstamp.registry.RegistryLog;
import io.snowstamp.registry.RegistryView;
import io.snowstamp.registry.WorkerRegistry;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Faketime;
import io.snowstamp.testing.Logback;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The worker registry on a real broker: overlapping applications refused, {@code auto}, concurrent
 * claims, a recreated registry, growth, changed configuration, release and safe reuse. Every test
 * has its own registry topic, so tests never see each other's claims.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Order(3)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(300)
class WorkerRegistryIT extends OnSharedBroker {
    private static final IdLayout SNOWFLAKE = IdLayout.preset("snowflake");
    /** Where the claim is logged (event=workers-claimed): runtime's RegistryClaim, not visible from this package. */
    private static final Class<?> CLAIM_LOG = claimLog();

    private static Class<?> claimLog() {
        try {
            return Class.forName("io.snowstamp.runtime.RegistryClaim");
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }
    @TempDir
    Path work;

    /** A new registry topic as topics/snowstamp-workers.properties declares it. */
    private static String registry() throws Exception {
        String name = TestBroker.unique("workers");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            // as topics apply does: until its leader takes writes (a client that looks at once may not find it yet)
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, name, 1, Duration.ofSeconds(60));
        }
        return name;
    }

    private Map<String, String> settings(String app, Stamper.Topics topics, String registry, String... more) {
        Map<String, String> settings = new HashMap<>(Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "application.id", app, "instance.id", app, "state.dir", work.resolve("state-" + app).toString(),
                "input.topic", topics.in(), "output.topic", topics.out(), "dlq.topic", topics.dlq(),
                "registry.topic", registry, "registry.heartbeat", "500ms"));
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    private StreamsRunner runner(Map<String, String> settings) {
        return new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis);
    }

    private static WorkerRegistry client(String registry) {
        return new WorkerRegistry(clientProps(), registry, Duration.ofSeconds(30), System::currentTimeMillis);
    }

    /** A client of a registry just created: its metadata may take a moment to reach every broker listener. */
    private static WorkerRegistry awaitClient(String registry) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return client(registry);
            } catch (io.snowstamp.SnowstampException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    private static WorkerRegistry.Request request(String space, String app, IdLayout layout, int partitions, long offset) {
        return new WorkerRegistry.Request(space, 0, app, layout, partitions, offset, "in-" + app, "out-" + app, app, null,
                Duration.ofSeconds(2));
    }

    private static WorkerRegistry.Request withGrace(WorkerRegistry.Request asks, Duration grace) {
        return new WorkerRegistry.Request(asks.space(), asks.datacenter(), asks.application(), asks.layout(), asks.partitions(),
                asks.offset(), asks.input(), asks.output(), asks.instance(), asks.expireAfter(), grace);
    }

    private static String[] kafka(String registry, String... args) {
        return Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers(), "--set", "registry.topic=" + registry);
    }

    @Test
    void shouldRefuseASecondApplicationOnTheSameWorkersAndRunBothWithAuto() throws Exception {
        String registry = registry();
        Stamper.Topics first = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper.Topics second = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String a = TestBroker.unique("team-a");
        String b = TestBroker.unique("team-b");
        try (StreamsRunner runnerA = runner(settings(a, first, registry))) {
            var claimedA = Logback.capture(CLAIM_LOG, runnerA::start);
            assertThat(runnerA.awaitRunning(Duration.ofSeconds(90))).isTrue();
            assertThat(Logback.events(claimedA, "workers-claimed")).as("id-spaces.md: the claim logged at start")
                    .containsExactly(Map.of("event", "workers-claimed", "firstWorker", 0L, "count", 2, "level", "INFO"));

            Throwable refused;
            try (StreamsRunner runnerB = runner(settings(b, second, registry))) {
                refused = catchThrowable(runnerB::start);
                assertThat(runnerB.streams()).as("Kafka Streams never started").isNull();
            }
            assertThat(refused).isInstanceOf(ClaimRefusedException.class);
            assertThat(refused.getMessage()).as("one line naming the other application, its range, its heartbeat and the fix")
                    .doesNotContain("\n")
                    .contains("id.worker-offset=0 claims workers 0..1 of ID space default, datacenter 0, but they overlap application "
                            + a + " (workers 0..1, last heartbeat ")
                    .contains("set id.worker-offset=2 (the first free range of 2 workers) or auto")
                    .contains("snowstamp workers release --application-id " + a);

            try (StreamsRunner runnerB = runner(settings(b, second, registry, "id.worker-offset", "auto"))) {
                var claimedB = Logback.capture(CLAIM_LOG, runnerB::start);
                assertThat(runnerB.awaitRunning(Duration.ofSeconds(90))).isTrue();
                assertThat(runnerB.workerOffset()).as("auto takes the lowest free range").isEqualTo(2);
                assertThat(Logback.events(claimedB, "workers-claimed")).as("the range auto chose, logged at start")
                        .containsExactly(Map.of("event", "workers-claimed", "firstWorker", 2L, "count", 2, "level", "INFO"));
                broker.produce(first.in(), 0, 3000);
                broker.produce(second.in(), 0, 3000);
                assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), first.out(), first.in(), 3000, Duration.ofSeconds(90))
                        .summaryLine()).isEqualTo(Verification.clean(3000));
                assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), second.out(), second.in(), 3000, Duration.ofSeconds(90))
                        .summaryLine()).isEqualTo(Verification.clean(3000));
            }
        }
        Cli.Result across = Cli.run(kafka(registry, "verify", "--topic", first.out(), "--topic", second.out()));
        assertThat(across.exitCode()).as("%s", across).isZero();
        assertThat(across.out()).contains("shared between topics: 0");
        assertThat(across.lastLine()).isEqualTo("records=6000 duplicates=0 missing=0 extra=0");

        Cli.Result list = Cli.run(kafka(registry, "workers", "list", "--format", "json"));
        assertThat(list.exitCode()).as("%s", list).isZero();
        assertThat(list.outLines()).hasSize(2);
        assertThat(list.out()).contains("\"application\":\"" + a + "\",\"firstWorker\":0,\"count\":2,\"state\":\"stopped\"")
                .contains("\"application\":\"" + b + "\",\"firstWorker\":2,\"count\":2,\"state\":\"stopped\"");
    }

    @Test
    void shouldStopStartupWithTheTopicsApplyHintWhenTheRegistryTopicIsMissing() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        try (StreamsRunner runner = runner(settings(TestBroker.unique("unregistered"), topics, TestBroker.unique("no-such-registry")))) {
            assertThat(catchThrowable(runner::start)).hasMessageContaining("worker registry topic no-such-registry-")
                    .hasMessageContaining("does not exist: create it with 'snowstamp topics apply'")
                    .hasMessageContaining("or set id.worker-registry=off");
            assertThat(runner.streams()).isNull();
        }
    }

    @Test
    void shouldGrantExactlyOneOfTwoSimultaneousClaimsInEachOf20Rounds() throws Exception {
        String registry = registry();
        int rounds = 20;
        int raced = 0;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (WorkerRegistry one = client(registry); WorkerRegistry two = client(registry)) {
            for (int round = 0; round < rounds; round++) {
                String space = "race-" + round;
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<Object>> results = new ArrayList<>();
                for (WorkerRegistry registryClient : List.of(one, two)) {
                    String app = (registryClient == one ? "one-" : "two-") + round;
                    results.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        try {
                            return registryClient.claim(request(space, app, SNOWFLAKE, 4, 0));
                        } catch (ClaimRefusedException e) {
                            return e;
                        }
                    }));
                }
                List<Object> outcomes = new ArrayList<>();
                for (Future<Object> result : results) {
                    outcomes.add(result.get(60, TimeUnit.SECONDS));
                }
                assertThat(outcomes.stream().filter(WorkerRegistry.Lease.class::isInstance).count())
                        .as("round %d: exactly one claim holds (%s)", round, outcomes).isEqualTo(1);
                // id-spaces.md: the loser is refused with the winner's name
                String winner = (outcomes.get(0) instanceof WorkerRegistry.Lease ? "one-" : "two-") + round;
                assertThat(outcomes).filteredOn(ClaimRefusedException.class::isInstance).singleElement()
                        .satisfies(refused -> assertThat(((ClaimRefusedException) refused).getMessage())
                                .contains("overlap application " + winner + " "));
                RegistryView view = one.readable().view();
                assertThat(view.verdicts().stream().filter(v -> v.claim().space().equals(space) && v.granted()).count())
                        .as("round %d: one granted claim in the registry", round).isEqualTo(1);
                if (view.inactive().stream().anyMatch(e -> e.claim().space().equals(space) && e.claim().state() == Claim.State.WITHDRAWN)) {
                    raced++;    // both appended before either read: the log's order decided
                }
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println("concurrent claim rounds: " + rounds + ", rounds where both claims were appended and the later one withdrew: " + raced);
    }

    /** id-spaces.md: with {@code id.worker-offset=auto} the loser of a simultaneous claim takes the next free range. */
    @Test
    void shouldGrantBothOfTwoSimultaneousAutoClaimsDisjointRanges() throws Exception {
        String registry = registry();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (WorkerRegistry one = client(registry); WorkerRegistry two = client(registry)) {
            for (int round = 0; round < 5; round++) {
                String space = "auto-race-" + round;
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<WorkerRegistry.Lease>> results = new ArrayList<>();
                for (WorkerRegistry registryClient : List.of(one, two)) {
                    String app = (registryClient == one ? "one-" : "two-") + round;
                    results.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        return registryClient.claim(request(space, app, SNOWFLAKE, 4, -1));
                    }));
                }
                WorkerRegistry.Lease first = results.get(0).get(60, TimeUnit.SECONDS);
                WorkerRegistry.Lease second = results.get(1).get(60, TimeUnit.SECONDS);
                assertThat(first.firstWorker() + first.count() <= second.firstWorker()
                        || second.firstWorker() + second.count() <= first.firstWorker())
                        .as("round %d: ranges %d+%d and %d+%d", round, first.firstWorker(), first.count(), second.firstWorker(),
                                second.count()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldRepopulateARecreatedRegistryBeforeGrantingTheRangesOfRunningApplications() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String a = TestBroker.unique("survivor");
        Map<String, String> settings = settings(a, topics, registry);
        Duration grace = ConfigLoader.load(null, Map.of(), settings).registry().grace();
        try (StreamsRunner runnerA = runner(settings)) {
            runnerA.start();
            assertThat(runnerA.awaitRunning(Duration.ofSeconds(90))).isTrue();
            recreate(registry);
            // at once, before A's next heartbeat: a newcomer asks for A's workers in the empty registry
            long started = System.nanoTime();
            Throwable refused;
            try (WorkerRegistry newcomer = awaitClient(registry)) {
                // the grace the configuration gives (registry.heartbeat=500ms): it covers a heartbeat of A under way while
                // the topic was deleted (each heartbeat ends within its timeout), and the next one that re-asserts
                refused = catchThrowable(() -> newcomer.claim(withGrace(request("default", TestBroker.unique("newcomer"), SNOWFLAKE, 2, 0),
                        grace)));
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            System.out.println("recreated registry: the newcomer's claim was decided after " + millis + " ms (grace " + grace.toMillis()
                    + " ms)");
            assertThat(refused).as("A re-asserted its claim first").isInstanceOf(ClaimRefusedException.class);
            assertThat(refused.getMessage()).contains("overlap application " + a);
            assertThat(runnerA.state()).isEqualTo(org.apache.kafka.streams.KafkaStreams.State.RUNNING);
        }
    }

    /** Deletes the registry topic and creates it again, empty (what an operator's mistake or a cluster rebuild does). */
    private static void recreate(String registry) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.deleteTopics(Set.of(registry)).all().get(60, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    admin.createTopics(List.of(new NewTopic(registry, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                            .all().get(60, TimeUnit.SECONDS);
                    break;
                } catch (java.util.concurrent.ExecutionException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    TimeUnit.MILLISECONDS.sleep(200);      // the deletion is still under way
                }
            }
        }
    }

    /**
     * id-spaces.md: a heartbeat under way while the registry is deleted and recreated, whatever its client waits for
     * afterwards, ends (or gives up) soon enough that the next one re-asserts the claim within a newcomer's grace. The
     * schedule is forced: the stamper fetches the registry one record at a time, and its heartbeat's read recreates the
     * topic after its first record, so that read waits for an end offset of the deleted topic that the new one does not
     * reach (until the client's timeout: a minute with the default recovery.tail-guard-timeout).
     */
    @Test
    void shouldRefuseANewcomerWhileAHeartbeatUnderWayAtTheDeletionIsStillWaiting() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String a = TestBroker.unique("beating");
        Map<String, String> settings = settings(a, topics, registry, "kafka.interceptor.classes", RecreateWhileRead.class.getName(),
                "kafka.max.poll.records", "1", "kafka.max.partition.fetch.bytes", "1");
        Duration grace = ConfigLoader.load(null, Map.of(), settings).registry().grace();
        try (StreamsRunner runnerA = runner(settings)) {
            runnerA.start();
            assertThat(runnerA.awaitRunning(Duration.ofSeconds(90))).isTrue();
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                // the claim and heartbeats: more records than a read's first poll and the fetch it sends before returning
                while (log.read().entries().size() < 4) {
                    assertThat(System.nanoTime()).as("A's first heartbeats").isLessThan(deadline);
                    TimeUnit.MILLISECONDS.sleep(100);
                }
            }
            java.util.concurrent.CompletableFuture<Void> recreated = RecreateWhileRead.arm(registry);
            recreated.get(90, TimeUnit.SECONDS);
            // at once, while that heartbeat is still under way: a newcomer asks for A's workers with the grace the
            // configuration gives (registry.heartbeat=500ms)
            long started = System.nanoTime();
            Throwable refused;
            String newcomerApp = TestBroker.unique("newcomer");
            do {
                // just recreated, the registry can still answer "does not exist" to a client that found it a moment before
                // (the broker's metadata of the new topic; a full CI run under load): not what this test is about, ask again
                try (WorkerRegistry newcomer = awaitClient(registry)) {
                    refused = catchThrowable(() -> newcomer.claim(withGrace(request("default", newcomerApp, SNOWFLAKE, 2, 0), grace)));
                }
            } while (refused != null && !(refused instanceof ClaimRefusedException) && refused.getMessage() != null
                    && refused.getMessage().contains("does not exist") && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(30));
            System.out.println("heartbeat under way at the deletion: the newcomer's claim was decided after "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms (grace " + grace.toMillis() + " ms)");
            assertThat(refused).as("A re-asserted its claim within the newcomer's grace").isInstanceOf(ClaimRefusedException.class);
            assertThat(refused.getMessage()).contains("overlap application " + a);
            assertThat(runnerA.state()).isEqualTo(org.apache.kafka.streams.KafkaStreams.State.RUNNING);
        }
    }

    /**
     * Recreates an armed registry topic from inside the first poll of it that returns records (the stamper's heartbeat:
     * the only reader of that topic with this interceptor), then lets the poll return what it got. Given to every client
     * of the stamper by {@code kafka.interceptor.classes}, so it is a producer interceptor too (passing records through).
     */
    public static final class RecreateWhileRead implements org.apache.kafka.clients.consumer.ConsumerInterceptor<Object, Object>,
            org.apache.kafka.clients.producer.ProducerInterceptor<Object, Object> {
        private static final Map<String, java.util.concurrent.CompletableFuture<Void>> ARMED = new java.util.concurrent.ConcurrentHashMap<>();

        static java.util.concurrent.CompletableFuture<Void> arm(String topic) {
            java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
            ARMED.put(topic, done);
            return done;
        }

        @Override
        public org.apache.kafka.clients.consumer.ConsumerRecords<Object, Object> onConsume(
                org.apache.kafka.clients.consumer.ConsumerRecords<Object, Object> records) {
            for (org.apache.kafka.common.TopicPartition partition : records.partitions()) {
                java.util.concurrent.CompletableFuture<Void> done = ARMED.remove(partition.topic());
                if (done != null) {
                    try {
                        recreate(partition.topic());
                        done.complete(null);
                    } catch (Exception e) {
                        done.completeExceptionally(e);
                    }
                }
            }
            return records;
        }

        @Override
        public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
            return record;
        }

        @Override
        public void onCommit(Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets) {
        }

        @Override
        public void close() {
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }
    }

    /**
     * operations.md (the grace period): a running application's clean stop records itself within the heartbeat timeout
     * (6 s at the default registry.heartbeat), not the registry's own 30 s. It lands (a bound below the registry log's
     * write guard once refused every record); when Kafka does not answer its read, it gives up by then.
     */
    @Test
    void shouldRecordACleanStopWithinTheHeartbeatTimeoutAndGiveUpByThen() throws Exception {
        Duration heartbeatTimeout = ConfigLoader.load(null, Map.of(), Map.of()).registry().heartbeatTimeout();
        String registry = registry();
        try (WorkerRegistry client = awaitClient(registry)) {
            WorkerRegistry.Lease lease = client.claim(request("default", "stops", SNOWFLAKE, 2, 0));
            client.stopped(lease, heartbeatTimeout);
            assertThat(client.readable().entries()).filteredOn(e -> e.claim().application().equals("stops"))
                    .last().satisfies(e -> assertThat(e.claim().note()).isEqualTo(WorkerRegistry.STOPPED_NOTE));
        }
        // the stop's read forced to wait for what never comes: the registry recreated inside its first poll (one record
        // at a time), so it waits for an end offset of the deleted topic (as in the test above)
        String recreated = registry();
        Properties slow = clientProps();
        slow.put("interceptor.classes", RecreateWhileRead.class.getName());
        slow.put("max.poll.records", "1");
        slow.put("max.partition.fetch.bytes", "1");
        try (WorkerRegistry client = new WorkerRegistry(slow, recreated, Duration.ofSeconds(30), System::currentTimeMillis)) {
            WorkerRegistry.Request asks = request("default", "stops-slowly", SNOWFLAKE, 2, 0);
            WorkerRegistry.Lease lease = client.claim(asks);
            for (int beat = 0; beat < 3; beat++) {
                client.heartbeat(asks, lease, heartbeatTimeout);
            }
            java.util.concurrent.CompletableFuture<Void> armed = RecreateWhileRead.arm(recreated);
            long started = System.nanoTime();
            Throwable failed = catchThrowable(() -> client.stopped(lease, heartbeatTimeout));
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            armed.get(1, TimeUnit.SECONDS);
            assertThat(failed).as("the read never completes").isInstanceOf(io.snowstamp.SnowstampException.class);
            assertThat(took).as("over by the heartbeat timeout (and a consumer's close), not the registry's 30 s")
                    .isLessThan(heartbeatTimeout.plusSeconds(5));
        }
    }

    @Test
    void shouldExtendAClaimWhenTheNextWorkersAreFreeAndRefuseWhenTheyAreNot() {
        String registry = uncheckedRegistry();
        try (WorkerRegistry client = client(registry)) {
            WorkerRegistry.Lease lease = client.claim(request("default", "grows", SNOWFLAKE, 2, 0));
            assertThat(lease.firstWorker()).isZero();
            WorkerRegistry.Lease grown = client.claim(request("default", "grows", SNOWFLAKE, 4, 0));
            assertThat(grown.how()).contains("extended the claim of workers 0..1 by workers 2..3");
            assertThat(grown.count()).isEqualTo(4);
            client.claim(request("default", "neighbour", SNOWFLAKE, 2, 4));
            Throwable refused = catchThrowable(() -> client.claim(request("default", "grows", SNOWFLAKE, 6, 0)));
            assertThat(refused).isInstanceOf(ClaimRefusedException.class)
                    .hasMessageContaining("the input grew to 6 partitions but workers 4..5 after application grows's workers 0..3 are held by"
                            + " application neighbour")
                    .hasMessageContaining("stamping with an unclaimed worker is never done");
            assertThat(client.claim(request("default", "grows", SNOWFLAKE, 4, 0)).how()).startsWith("joined the claim of workers 0..3");
        }
    }

    @Test
    void shouldExtendTheClaimWhenTheInputGrowsAndRefuseToGrowIntoAnotherApplicationsWorkers() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("growing");
        try (StreamsRunner runner = runner(settings(app, topics, registry))) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            broker.produce(topics.in(), 0, 200);
            Verification.awaitAllStamped(broker.bootstrapServers(), topics.out(), topics.in(), 200, Duration.ofSeconds(90));
        }
        // the operator grows the input, the output and the worker-state changelog (Kafka Streams needs them equal)
        grow(4, topics.in(), topics.out(), app + "-worker-state-changelog");
        try (StreamsRunner grown = runner(settings(app, topics, registry))) {
            grown.start();
            assertThat(grown.awaitRunning(Duration.ofSeconds(90))).isTrue();
            broker.produce(topics.in(), 200, 400);
            assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), topics.out(), topics.in(), 600, Duration.ofSeconds(90))
                    .summaryLine()).isEqualTo(Verification.clean(600));
        }
        Cli.Result list = Cli.run(kafka(registry, "workers", "list"));
        assertThat(list.out()).as("%s", list).contains("0..1").contains("2..3");

        // another application takes the next workers; growing again is refused before Kafka Streams starts
        try (WorkerRegistry neighbour = client(registry)) {
            neighbour.claim(request("default", TestBroker.unique("neighbour"), SNOWFLAKE, 2, 4));
        }
        grow(6, topics.in(), topics.out(), app + "-worker-state-changelog");
        try (StreamsRunner refused = runner(settings(app, topics, registry))) {
            assertThat(catchThrowable(refused::start)).isInstanceOf(ClaimRefusedException.class)
                    .hasMessageContaining("the input grew to 6 partitions but workers 4..5")
                    .hasMessageContaining("stamping with an unclaimed worker is never done");
            assertThat(refused.streams()).isNull();
        }
    }

    private static void grow(int partitions, String... topics) throws Exception {
        Map<String, org.apache.kafka.clients.admin.NewPartitions> increase = new HashMap<>();
        for (String topic : topics) {
            increase.put(topic, org.apache.kafka.clients.admin.NewPartitions.increaseTo(partitions));
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createPartitions(increase).all().get(60, TimeUnit.SECONDS);
            // the controller has committed the growth; the broker's metadata (what the stamper's start reads) follows a moment later
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (admin.describeTopics(increase.keySet()).allTopicNames().get(30, TimeUnit.SECONDS).values().stream()
                    .anyMatch(description -> description.partitions().size() < partitions)) {
                assertThat(System.nanoTime()).as("the broker's metadata shows %d partitions", partitions).isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    @Test
    void shouldRefuseAnInstanceWhoseOffsetOrLayoutDisagreesWithItsApplicationsClaim() {
        String registry = uncheckedRegistry();
        try (WorkerRegistry client = client(registry)) {
            client.claim(request("default", "steady", SNOWFLAKE, 2, 0));
            assertThat(catchThrowable(() -> client.claim(request("default", "steady", SNOWFLAKE, 2, 8))))
                    .isInstanceOf(ClaimRefusedException.class)
                    .hasMessageContaining("this instance of application steady is configured with id.worker-offset=8 (the claim's: 0)");
            IdLayout sonyflake = IdLayout.preset("sonyflake");
            assertThat(catchThrowable(() -> client.claim(request("default", "steady", sonyflake, 2, 0))))
                    .isInstanceOf(ClaimRefusedException.class)
                    .hasMessageContaining("is configured with layout " + sonyflake.fingerprint());
            assertThat(catchThrowable(() -> client.claim(request("default", "other-layout", sonyflake, 2, 100))))
                    .as("another application with another layout in the same ID space")
                    .isInstanceOf(ClaimRefusedException.class).hasMessageContaining("IDs of two layouts can collide");
            assertThat(client.claim(request("elsewhere", "other-layout", sonyflake, 2, 0)).firstWorker())
                    .as("another ID space is independent").isZero();
            assertThat(client.claim(request("default", "steady", SNOWFLAKE, 2, -1)).firstWorker()).as("auto keeps the claim").isZero();
        }
    }

    /**
     * id-spaces.md: a space holding IDs of another layout refuses a claim also when that layout's claims are released (their
     * IDs exist), even on workers far from theirs; another space stays free.
     */
    @Test
    void shouldRefuseANewClaimWhileReleasedClaimsOfAnotherLayoutRemain() {
        String registry = uncheckedRegistry();
        IdLayout sonyflake = IdLayout.preset("sonyflake");
        try (WorkerRegistry client = client(registry)) {
            client.claim(request("default", "retired-sony", sonyflake, 2, 0));
            RegistryView view = client.readable().view();
            client.release(view, view.heldBy("default", "retired-sony"), new java.util.TreeMap<>(), "the test", "retired");
            assertThat(client.readable().view().inactive()).as("only a released claim of the other layout is left")
                    .anyMatch(e -> e.claim().application().equals("retired-sony") && e.claim().state() == Claim.State.RELEASED);
            assertThat(catchThrowable(() -> client.claim(request("default", "new-snow", SNOWFLAKE, 2, 100))))
                    .isInstanceOf(ClaimRefusedException.class)
                    .hasMessageContaining("but application retired-sony (released, workers 0..1) issued IDs of layout "
                            + sonyflake.fingerprint())
                    .hasMessageContaining("IDs of two layouts can collide");
            assertThat(client.claim(request("other-space", "new-snow", SNOWFLAKE, 2, 0)).firstWorker()).isZero();
        }
    }

    @Test
    void shouldRecycleAnExpiredClaimWithAutoOnlyAfterRecordingItsMarks() throws Exception {
        String registry = uncheckedRegistry();
        IdLayout twoWorkers = new IdLayout(41, 0, 1, 21, IdLayout.DEFAULT_EPOCH_MILLIS, 1, false);
        try (WorkerRegistry client = client(registry)) {
            client.claim(request("default", "gone", twoWorkers, 2, 0));
            TimeUnit.MILLISECONDS.sleep(1500);
            WorkerRegistry.Request auto = new WorkerRegistry.Request("default", 0, "heir", twoWorkers, 2, -1, "in-heir", "out-heir",
                    "heir", Duration.ofSeconds(1), Duration.ofSeconds(2));
            assertThat(client.claim(auto).firstWorker()).isZero();
            RegistryView view = client.readable().view();
            Claim released = view.inactive().stream().map(RegistryView.Entry::claim).filter(c -> c.application().equals("gone"))
                    .findFirst().orElseThrow();
            assertThat(released.state()).isEqualTo(Claim.State.RELEASED);
            assertThat(released.note()).contains("expired");
            assertThat(released.marks()).containsOnlyKeys(0L, 1L);
        }
    }

    /**
     * A child-JVM stamper in the test's own registry, fast heartbeats, and the default ID space (Stamper would give each
     * application a space of its own): the applications of one test must meet in one space.
     */
    private Stamper registered(String registry, String app, Stamper.Topics topics, String instance) {
        return Stamper.of(work, broker.bootstrapServers(), app, topics, instance).with("id.space", "default")
                .with("registry.topic", registry).with("registry.heartbeat", "500ms").with("registry.stale-after", "3s");
    }

    @Test
    void shouldResumeAboveTheReleasedMarksWithEmptyStateANewOutputAndAClockAnHourBehind() throws Exception {
        Faketime.assumeAvailable();
        String registry = registry();
        Stamper.Topics old = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String retired = TestBroker.unique("retired");
        try (ChildJvm child = registered(registry, retired, old, "old").start()) {
            broker.produce(old.in(), 0, 2000);
            assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), old.out(), old.in(), 2000, Duration.ofSeconds(90))
                    .summaryLine()).isEqualTo(Verification.clean(2000));
            assertThat(child.terminate(60)).isIn(0, 143);
        }
        Cli.Result dryRun = Cli.run(kafka(registry, "workers", "release", "--application-id", retired));
        assertThat(dryRun.exitCode()).as("%s", dryRun).isZero();
        assertThat(dryRun.out()).contains("dry run: nothing written");
        Cli.Result release = Cli.run(kafka(registry, "workers", "release", "--application-id", retired, "--apply"));
        assertThat(release.exitCode()).as("%s", release).isZero();
        Map<Long, Long> oldHighest = highestPerWorker(old.out());

        // a new application: new output topic, empty state, its clock an hour behind, the registry picks the released range
        Stamper.Topics fresh = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper successor = registered(registry, TestBroker.unique("successor"), fresh, "new").with("id.worker-offset", "auto")
                .withClockOffset("-1h");
        try (ChildJvm child = successor.start()) {
            broker.produce(fresh.in(), 0, 2000);
            assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), fresh.out(), fresh.in(), 2000, Duration.ofSeconds(90))
                    .summaryLine()).isEqualTo(Verification.clean(2000));
            assertThat(child.logs()).contains("id.worker-offset=auto chose 0").contains("from registry");
            assertThat(child.terminate(60)).isIn(0, 143);
        }
        Map<Long, Long> newLowest = lowestPerWorker(fresh.out());
        assertThat(newLowest).containsOnlyKeys(oldHighest.keySet());
        newLowest.forEach((worker, lowest) -> {
            System.out.println("recycled worker " + worker + ": old highest " + oldHighest.get(worker) + " ("
                    + java.time.Instant.ofEpochMilli(SNOWFLAKE.decode(oldHighest.get(worker)).wallMillis()) + "), new lowest " + lowest
                    + " (" + java.time.Instant.ofEpochMilli(SNOWFLAKE.decode(lowest).wallMillis()) + ")");
            assertThat(lowest).as("worker %d resumes above the released mark", worker).isGreaterThan(oldHighest.get(worker));
        });
        Cli.Result across = Cli.run(kafka(registry, "verify", "--topic", old.out(), "--topic", fresh.out()));
        assertThat(across.exitCode()).as("%s", across).isZero();
        assertThat(across.lastLine()).isEqualTo("records=4000 duplicates=0 missing=0 extra=0");
    }

    @Test
    void shouldListAStaleClaimForceReleaseItAndReuseItSafely() throws Exception {
        String registry = registry();
        Stamper.Topics old = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String crashed = TestBroker.unique("crashed");
        try (ChildJvm child = registered(registry, crashed, old, "old").start()) {
            broker.produce(old.in(), 0, 2000);
            assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), old.out(), old.in(), 2000, Duration.ofSeconds(90))
                    .summaryLine()).isEqualTo(Verification.clean(2000));
            child.kill();
        }
        String[] staleAfter = {"--set", "registry.stale-after=3s"};
        Cli.Result list = awaitCli(r -> r.out().contains("\"state\":\"stale\""),
                Cli.concat(kafka(registry, "workers", "list", "--format", "json"), staleAfter));
        assertThat(list.out()).as("%s", list).contains("\"application\":\"" + crashed + "\"").contains("\"state\":\"stale\"");
        // refused without --force (first while its group still has the dead member, then because it did not stop cleanly)
        Cli.Result refused = awaitCli(r -> r.err().contains("--force"),
                Cli.concat(kafka(registry, "workers", "release", "--application-id", crashed), staleAfter));
        assertThat(refused.exitCode()).as("%s", refused).isEqualTo(1);
        assertThat(refused.err()).contains("is stale").contains("release it with --force");
        Cli.Result forced = Cli.run(Cli.concat(kafka(registry, "workers", "release", "--application-id", crashed, "--force", "--apply"),
                staleAfter));
        assertThat(forced.exitCode()).as("%s", forced).isZero();
        Map<Long, Long> oldHighest = highestPerWorker(old.out());

        Stamper.Topics fresh = Stamper.Topics.create(broker.bootstrapServers(), 2);
        try (StreamsRunner heir = runner(settings(TestBroker.unique("heir"), fresh, registry, "id.worker-offset", "auto"))) {
            heir.start();
            assertThat(heir.awaitRunning(Duration.ofSeconds(90))).isTrue();
            assertThat(heir.workerOffset()).as("the released range is free again").isZero();
            broker.produce(fresh.in(), 0, 2000);
            assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), fresh.out(), fresh.in(), 2000, Duration.ofSeconds(90))
                    .summaryLine()).isEqualTo(Verification.clean(2000));
        }
        lowestPerWorker(fresh.out()).forEach((worker, lowest) ->
                assertThat(lowest).as("worker %d resumes above the force-released mark", worker).isGreaterThan(oldHighest.get(worker)));
        Cli.Result across = Cli.run(kafka(registry, "verify", "--topic", old.out(), "--topic", fresh.out()));
        assertThat(across.exitCode()).as("%s", across).isZero();
    }

    /** id-spaces.md: a claim released while the stamper runs makes it stop at its next heartbeat, with the reason. */
    @Test
    void shouldStopTheStamperWhenItsClaimIsReleasedWhileItRuns() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("released-running");
        try (StreamsRunner runner = runner(settings(app, topics, registry))) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                RegistryLog.Snapshot snapshot = log.read();
                RegistryView view = snapshot.view();
                RegistryView.Verdict held = view.verdicts().stream().filter(v -> v.claim().application().equals(app))
                        .findFirst().orElseThrow();
                Claim claim = held.claim();
                // the release, then the stamper's heartbeat read before the release and written after it (the schedule
                // that once revived the claim under CI load: the stamper never stopped), forced here. One batch: a
                // heartbeat of the stamper reading between two separate writes would see the release alone and stop
                // without rewriting it, and the test's stand-in heartbeat (which the stamper's own thread could never
                // write after that) would stay newest.
                appendInOneBatch(registry,
                        claim.withState(Claim.State.RELEASED, System.currentTimeMillis(), view.order(held.entry()),
                                snapshot.registryId(), claim.marks(), "released by the test while the stamper runs"),
                        claim.withHeartbeat(System.currentTimeMillis(), view.order(held.entry()), snapshot.registryId()));
            }
            Throwable failure = catchThrowable(() -> assertThat(runner.awaitTermination(Duration.ofSeconds(60)))
                    .as("the stamper stops within a few heartbeats").isTrue());
            assertThat(failure).as("the stamper's error").isNotNull();
            assertThat(failure.getMessage()).contains("was released while the application ran", "released by the test");
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                List<RegistryView.Entry> ofTheApp = log.read().entries().stream()
                        .filter(e -> e.claim().application().equals(app)).toList();
                assertThat(ofTheApp.get(ofTheApp.size() - 1).claim().state()).as("the newest record, the one compaction keeps")
                        .isEqualTo(Claim.State.RELEASED);
            }
        }
    }

    /**
     * id-spaces.md: a heartbeat that fails (here: a registry that cannot be read, an unreadable record appended while the
     * stamper runs) is tried again at the next one; the claim stands and the stamper stamps on. The heartbeats failed:
     * none was written while the record was there; they were tried again: one is written once a tombstone for its key
     * removed it (id-spaces.md, the record format).
     */
    @Test
    void shouldKeepStampingWhileHeartbeatsFail() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("failing-beats");
        try (StreamsRunner runner = runner(settings(app, topics, registry))) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            long unreadableAt = appendUnreadable(registry);
            TimeUnit.SECONDS.sleep(5);      // ten heartbeats (registry.heartbeat=500ms), each of them failing
            broker.produce(topics.in(), 0, 200);
            assertThat(Verification.awaitAllStamped(broker.bootstrapServers(), topics.out(), topics.in(), 200, Duration.ofSeconds(90))
                    .summaryLine()).isEqualTo(Verification.clean(200));
            assertThat(runner.awaitTermination(Duration.ofMillis(1))).as("still running").isFalse();
            assertThat(runner.state()).isEqualTo(org.apache.kafka.streams.KafkaStreams.State.RUNNING);
            long readableAt = removeUnreadable(registry);
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                // at most one: a heartbeat under way when the record was appended (read before it, written after it)
                assertThat(heartbeatsOf(log, app, unreadableAt, readableAt)).as("no heartbeat written while the registry was unreadable")
                        .isLessThanOrEqualTo(1);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (heartbeatsOf(log, app, readableAt, Long.MAX_VALUE) == 0 && System.nanoTime() < deadline) {
                    TimeUnit.MILLISECONDS.sleep(100);
                }
                assertThat(heartbeatsOf(log, app, readableAt, Long.MAX_VALUE)).as("a heartbeat written once it is readable again")
                        .isPositive();
            }
            assertThat(runner.state()).isEqualTo(org.apache.kafka.streams.KafkaStreams.State.RUNNING);
        }
    }

    /** Records of the application strictly between two offsets. */
    private static long heartbeatsOf(RegistryLog log, String app, long after, long before) {
        return log.read().entries().stream().filter(e -> e.claim().application().equals(app))
                .filter(e -> e.offset() > after && e.offset() < before).count();
    }

    /** A tombstone for the unreadable record (readers skip tombstones): the registry is readable again; returns its offset. */
    private static long removeUnreadable(String registry) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            return producer.send(new ProducerRecord<>(registry, 0, "junk".getBytes(java.nio.charset.StandardCharsets.UTF_8), null))
                    .get(30, TimeUnit.SECONDS).offset();
        }
    }

    /** id-spaces.md: a registry holding records the stamper cannot read is refused at start, in one line naming it. */
    @Test
    void shouldRefuseToStartOnARegistryHoldingUnreadableRecords() throws Exception {
        String registry = registry();
        appendUnreadable(registry);
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        try (StreamsRunner runner = runner(settings(TestBroker.unique("unreadable"), topics, registry))) {
            Throwable refused = catchThrowable(runner::start);
            assertThat(refused).as("start refused").isNotNull();
            assertThat(refused.getMessage()).contains("the worker registry " + registry + " holds 1 unreadable record(s), first offset 0"
                    + " (key junk)", "refusing to decide on a registry it cannot read");
        }
    }

    /** A record under a claim's kind of key that is no claim: what another tool or a newer version could leave. Its offset. */
    private static long appendUnreadable(String registry) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            return producer.send(new ProducerRecord<>(registry, 0, "junk".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    "not a claim".getBytes(java.nio.charset.StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS).offset();
        }
    }

    /** Appends claims as one batch (the log appends a batch whole: a reader sees all of them or none). */
    private static void appendInOneBatch(String registry, Claim... claims) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "60000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (Claim claim : claims) {
                sent.add(producer.send(new ProducerRecord<>(registry, 0, claim.key().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        ClaimCodec.encode(claim))));
            }
            producer.flush();       // the linger holds every record in the one batch until here
            long first = sent.get(0).get(30, TimeUnit.SECONDS).offset();
            for (int i = 1; i < sent.size(); i++) {
                assertThat(sent.get(i).get(30, TimeUnit.SECONDS).offset()).as("consecutive offsets of one batch").isEqualTo(first + i);
            }
        }
    }

    private static Properties clientProps() {
        Properties props = new Properties();
        props.put("bootstrap.servers", broker.bootstrapServers());
        return props;
    }

    /** Runs a command every second until {@code done} holds (at most 60 s); returns the last result. */
    private static Cli.Result awaitCli(java.util.function.Predicate<Cli.Result> done, String... args) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Cli.Result result = Cli.run(args);
            if (done.test(result) || System.nanoTime() > deadline) {
                return result;
            }
            TimeUnit.SECONDS.sleep(1);
        }
    }

    private static String uncheckedRegistry() {
        try {
            return registry();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Highest ID per worker in a stamped topic. */
    static Map<Long, Long> highestPerWorker(String topic) {
        return perWorker(topic, Math::max);
    }

    static Map<Long, Long> lowestPerWorker(String topic) {
        return perWorker(topic, Math::min);
    }

    private static Map<Long, Long> perWorker(String topic, java.util.function.BinaryOperator<Long> pick) {
        Map<Long, Long> result = new HashMap<>();
        for (StampedRecords.Stamped record : StampedRecords.read(broker.bootstrapServers(), topic)) {
            result.merge(SNOWFLAKE.decode(record.id()).worker(), record.id(), pick);
        }
        return result;
    }
}
