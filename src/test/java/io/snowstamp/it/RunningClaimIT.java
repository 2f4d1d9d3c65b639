package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.id.IdLayout;
import io.snowstamp.registry.Claim;
import io.snowstamp.registry.ClaimRefusedException;
import io.snowstamp.registry.RegistryLog;
import io.snowstamp.registry.RegistryView;
import io.snowstamp.registry.WorkerRegistry;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The worker registry while the stamper runs (id-spaces.md): a claim taken by another application,
 * a claim that {@code registry.expire-after} must not recycle because its application still runs,
 * and a task whose worker lies outside the claim. Every test has a registry topic of its own: the
 * class shares one broker, and one test's claims must never decide another's.
 */
@Tag("integration")
@Timeout(300)
class RunningClaimIT extends OnSharedBroker {
    @TempDir
    Path work;

    /** A new registry topic as topics/snowstamp-workers.properties declares it. */
    private static String registry() throws Exception {
        return registry(broker);
    }

    private static String registry(TestBroker on) throws Exception {
        String name = TestBroker.unique("workers");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, on.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, name, 1, Duration.ofSeconds(60));
        }
        return name;
    }

    private static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
    }

    private StreamsRunner runner(String app, Stamper.Topics topics, String registry, String... more) {
        return runner(broker, app, topics, registry, more);
    }

    private StreamsRunner runner(TestBroker on, String app, Stamper.Topics topics, String registry, String... more) {
        Map<String, String> settings = new HashMap<>(Map.of("kafka.bootstrap.servers", on.bootstrapServers(),
                "application.id", app, "instance.id", app, "state.dir", work.resolve("state-" + app).toString(),
                "input.topic", topics.in(), "output.topic", topics.out(), "dlq.topic", topics.dlq(),
                "registry.topic", registry, "registry.heartbeat", "500ms"));
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis);
    }

    private static Properties clientProps() {
        return clientProps(broker);
    }

    private static Properties clientProps(TestBroker on) {
        Properties props = new Properties();
        props.put("bootstrap.servers", on.bootstrapServers());
        return props;
    }

    /** The stamper's error once it stopped by itself (within a few heartbeats), or a failure if it still runs. */
    private static Throwable stopsWithAnError(StreamsRunner runner) {
        Throwable failure = catchThrowable(() -> assertThat(runner.awaitTermination(Duration.ofSeconds(90)))
                .as("the stamper stops by itself").isTrue());
        assertThat(failure).as("the stamper stopped with an error").isNotNull().isNotInstanceOf(AssertionError.class);
        return failure;
    }

    /**
     * A record that puts another application's claim on the stamper's workers ahead of the stamper's own claim in the
     * registry's order (its first offset is the registry's first record, before the stamper's): what a tool or an
     * operator writing the registry by hand could leave. At its next heartbeat the stamper finds its claim no longer
     * granted and stops.
     */
    @Test
    void shouldStopTheStamperWhenAnotherApplicationTakesItsClaimWhileItRuns() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("taken-running");
        try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
            // offset 0: a claim in another space, so that the stamper's own claim comes later in the log
            log.append(new Claim("elsewhere", 0, "first-in-log", 0, 1, IdLayout.preset("snowflake").fingerprint(), "in", "out",
                    "first-in-log", System.currentTimeMillis(), System.currentTimeMillis(), Claim.State.ACTIVE, -1,
                    log.read().registryId(), new TreeMap<>(), ""));
        }
        try (StreamsRunner runner = runner(app, topics, registry)) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            String usurper = TestBroker.unique("usurper");
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                RegistryLog.Snapshot snapshot = log.read();
                Claim own = snapshot.view().heldBy("default", app).get(0).claim();
                long now = System.currentTimeMillis();
                log.append(new Claim(own.space(), own.datacenter(), usurper, own.firstWorker(), own.count(), own.layout(), "in", "out",
                        usurper, now, now, Claim.State.ACTIVE, 0, snapshot.registryId(), new TreeMap<>(), "taken by the test"));
                RegistryView after = log.read().view();
                assertThat(after.heldBy("default", usurper)).as("the usurper's claim comes first in the order: granted").hasSize(1);
            }
            Throwable failure = stopsWithAnError(runner);
            assertThat(failure.getMessage()).contains("is no longer granted", usurper);
        }
    }

    /**
     * {@code registry.expire-after} recycles a claim without heartbeat only when its application has no group member: an
     * application that runs but whose heartbeats stopped (here: a heartbeat period of ten minutes, the longest accepted)
     * keeps its workers. On a broker of its own: a new claim first waits two of its own heartbeats (here twenty minutes)
     * for every other application that runs with worker state and no claim in this registry (id-spaces.md), and on the
     * shared broker other classes' stampers run beside it.
     */
    @Test
    void shouldNotRecycleAnExpiredClaimWhoseApplicationStillHasAGroupMember() throws Exception {
        try (TestBroker own = TestBroker.start()) {
            notRecycledWhileRunning(own);
        }
    }

    private void notRecycledWhileRunning(TestBroker broker) throws Exception {
        String registry = registry(broker);
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("silent-running");
        try (StreamsRunner runner = runner(broker, app, topics, registry, "registry.heartbeat", "10m")) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            TimeUnit.MILLISECONDS.sleep(1500);      // its claim has had no heartbeat for longer than the heir's expire-after
            IdLayout snowflake = IdLayout.preset("snowflake");
            int all = (int) snowflake.maxWorker() + 1;  // every worker: only the running application's range could make room
            try (WorkerRegistry client = new WorkerRegistry(clientProps(broker), registry, Duration.ofSeconds(30), System::currentTimeMillis)) {
                WorkerRegistry.Request heir = new WorkerRegistry.Request("default", 0, TestBroker.unique("heir"), snowflake, all, -1,
                        "in-heir", "out-heir", "heir", Duration.ofSeconds(1), Duration.ofSeconds(2));
                Throwable refused = catchThrowable(() -> client.claim(heir));
                assertThat(refused).as("nothing recycled").isInstanceOf(ClaimRefusedException.class)
                        .hasMessageContaining("no range of " + all + " free workers left");
                RegistryView view = client.readable().view();
                assertThat(view.heldBy("default", app)).as("the running application's claim stands").hasSize(1);
                assertThat(view.inactive()).as("no claim released").noneMatch(e -> e.claim().state() == Claim.State.RELEASED);
            }
            assertThat(runner.state()).isEqualTo(KafkaStreams.State.RUNNING);
        }
    }

    /**
     * Partitions added to the input (with the output and the worker-state changelog, so that Kafka Streams itself accepts
     * them) while the stamper runs: the new task's worker lies outside the claim, and the stamper stops rather than
     * stamp with an unclaimed worker.
     */
    @Test
    void shouldStopTheStamperWhenATaskWorkerFallsOutsideTheClaimAfterTheInputGrew() throws Exception {
        String registry = registry();
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("grown-running");
        // metadata refreshed every second: Kafka Streams sees the new partitions at once, not after the default 5 minutes
        try (StreamsRunner runner = runner(app, topics, registry, "kafka.metadata.max.age.ms", "1000")) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            broker.produce(topics.in(), 0, 10);
            try (Admin admin = admin()) {
                String changelog = app + "-worker-state-changelog";
                // grown while running, so the records-set-aside changelog too (a start grows it itself: id-spaces.md)
                admin.createPartitions(Map.of(changelog, NewPartitions.increaseTo(3), topics.out(), NewPartitions.increaseTo(3),
                        app + "-pending-records-changelog", NewPartitions.increaseTo(3),
                        topics.in(), NewPartitions.increaseTo(3))).all().get(60, TimeUnit.SECONDS);
            }
            Throwable failure = stopsWithAnError(runner);
            assertThat(failure.getMessage()).contains("worker 2 is outside the claimed workers 0..1 (the input grew while the stamper ran)");
        }
    }
}
