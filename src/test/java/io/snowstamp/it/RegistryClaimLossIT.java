package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.registry.Claim;
import io.snowstamp.registry.RegistryLog;
import io.snowstamp.registry.RegistryView;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * id-spaces.md, a registry deleted and recreated: a running application re-asserts its missing claim
 * at its next heartbeat, and when another application claimed the same workers in the new registry
 * first, the re-assertion loses and the stamper stops with the reason (it never stamps with workers
 * the registry grants to someone else).
 */
@Tag("integration")
@Timeout(300)
class RegistryClaimLossIT extends OnSharedBroker {
    /**
     * Long enough that the registry is deleted, recreated and the other claim appended between two heartbeats; short
     * enough for the start, which waits up to two heartbeats and a second for the stampers of other test classes
     * (group members with worker state, no claim in this test's registry).
     */
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    private static final int ATTEMPTS = 3;

    @TempDir
    Path work;

    @Test
    void shouldStopTheStamperWhenAnotherApplicationClaimedItsWorkersFirstInARecreatedRegistry() throws Exception {
        String registry = TestBroker.unique("workers");
        createRegistry(registry);
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        String app = TestBroker.unique("outrun");
        String usurper = TestBroker.unique("first-in-new-registry");
        try (StreamsRunner runner = runner(app, topics, registry)) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).isTrue();
            Claim own;
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                own = log.read().view().heldBy("default", app).get(0).claim();
            }
            boolean forced = false;
            for (int attempt = 1; attempt <= ATTEMPTS && !forced; attempt++) {
                awaitHeartbeat(registry, app);     // a whole heartbeat period ahead for the deletion, the creation and the append
                recreate(registry);
                forced = appendFirst(registry, own, usurper) == 0;
                // else the stamper re-asserted before the append (a slow deletion): the registry is recreated again
                System.out.println("recreated registry, attempt " + attempt + ": the other application's claim came first: " + forced);
            }
            assertThat(forced).as("the other application's claim was the recreated registry's first record in one of %d attempts",
                    ATTEMPTS).isTrue();
            Throwable failure = catchThrowable(() -> assertThat(runner.awaitTermination(Duration.ofSeconds(90)))
                    .as("the stamper stops by itself at its next heartbeat").isTrue());
            assertThat(failure).as("the stamper stopped with an error").isNotNull().isNotInstanceOf(AssertionError.class);
            assertThat(failure.getMessage()).contains("the claim " + own.key() + " was missing from the registry (recreated?) and could"
                    + " not be re-asserted: application " + usurper + " (workers " + own.range() + ", last heartbeat ")
                    .contains("claimed its workers first");
            try (RegistryLog log = RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30))) {
                RegistryView view = log.read().view();
                assertThat(view.heldBy("default", usurper)).as("the other application's claim stands").hasSize(1);
                assertThat(view.heldBy("default", app)).as("the stamper's re-assertion lost").isEmpty();
            }
        }
    }

    private StreamsRunner runner(String app, Stamper.Topics topics, String registry) {
        Map<String, String> settings = Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "application.id", app, "instance.id", app, "state.dir", work.resolve("state-" + app).toString(),
                "input.topic", topics.in(), "output.topic", topics.out(), "dlq.topic", topics.dlq(),
                "registry.topic", registry, "registry.heartbeat", HEARTBEAT.toMillis() + "ms");
        return new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis);
    }

    /** Waits until a heartbeat record of the application lands (the next one is a heartbeat period away). */
    private static void awaitHeartbeat(String registry, String app) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (RegistryLog log = openWhenReady(registry)) {
            long before = newestOffsetOf(log, app);
            while (newestOffsetOf(log, app) == before) {
                assertThat(System.nanoTime()).as("a heartbeat of %s within 60 s", app).isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    private static long newestOffsetOf(RegistryLog log, String app) {
        return log.read().entries().stream().filter(e -> e.claim().application().equals(app))
                .mapToLong(RegistryView.Entry::offset).max().orElse(-1);
    }

    /**
     * Appends another application's claim of the same workers to the recreated registry.
     *
     * @return its offset: 0 when it is the registry's first record (the stamper has not re-asserted yet)
     */
    private static long appendFirst(String registry, Claim own, String usurper) throws InterruptedException {
        try (RegistryLog log = openWhenReady(registry)) {
            long now = System.currentTimeMillis();
            return log.append(new Claim(own.space(), own.datacenter(), usurper, own.firstWorker(), own.count(), own.layout(), "in",
                    "out", usurper, now, now, Claim.State.ACTIVE, -1, log.read().registryId(), new TreeMap<>(),
                    "claimed by the test in the recreated registry"));
        }
    }

    private static void createRegistry(String name) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, name, 1, Duration.ofSeconds(60));
        }
    }

    private static void recreate(String registry) throws Exception {
        try (Admin admin = admin()) {
            admin.deleteTopics(Set.of(registry)).all().get(60, TimeUnit.SECONDS);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                createRegistry(registry);
                return;
            } catch (java.util.concurrent.ExecutionException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(100);      // the deletion is still under way
            }
        }
    }

    /** A registry client of a topic just created: its metadata may take a moment to reach the broker's listener. */
    private static RegistryLog openWhenReady(String registry) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return RegistryLog.open(clientProps(), registry, Duration.ofSeconds(30));
            } catch (io.snowstamp.SnowstampException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    private static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
    }

    private static Properties clientProps() {
        Properties props = new Properties();
        props.put("bootstrap.servers", broker.bootstrapServers());
        return props;
    }
}
