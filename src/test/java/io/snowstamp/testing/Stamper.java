package io.snowstamp.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * How to start one stamper instance ({@code snowstamp run}) as a child JVM: broker, application
 * id, topics, state directory and instance id, extra {@code --set} keys, and an optional command
 * prefix (faketime) with its environment. Immutable; {@code with...} returns a copy. Every
 * {@link #launch} logs to new files {@code <logDir>/<instance>-<n>.out/.err}, so a restarted
 * instance never matches the previous run's output.
 */
public record Stamper(Path logDir, String bootstrapServers, String applicationId, Topics topics,
                      Path stateDir, String instanceId, Map<String, String> settings,
                      List<String> prefix, Map<String, String> env, List<String> jvmArgs) {
    private static final AtomicInteger STARTS = new AtomicInteger();

    /**
     * JVM flags that halve a stamper's start-up on a small machine (C1 only, serial GC): restarts
     * are what fault tests do most. They change nothing the stamper does, only how fast the JVM
     * gets there; steady-state throughput is somewhat lower.
     */
    public static final List<String> FAST_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    /** The stamper prints this on stdout once Kafka Streams has been started. */
    public static final String STARTED = "stamping ";

    /** Input, output and dead-letter topic names. */
    public record Topics(String in, String out, String dlq) {
        /** Creates unique topics ({@code partitions} for input and output, 1 for the DLQ) on any broker. */
        public static Topics create(String bootstrapServers, int partitions) throws Exception {
            Topics topics = new Topics(TestBroker.unique("raw"), TestBroker.unique("stamped"), TestBroker.unique("dlq"));
            TestBroker.createTopic(bootstrapServers, topics.in, partitions);
            TestBroker.createTopic(bootstrapServers, topics.out, partitions);
            TestBroker.createTopic(bootstrapServers, topics.dlq, 1);
            return topics;
        }

    }

    public Stamper {
        settings = Collections.unmodifiableMap(new LinkedHashMap<>(settings));
        prefix = List.copyOf(prefix);
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        jvmArgs = List.copyOf(jvmArgs);
    }

    /** Where child logs go by default: kept after the test (under target/, which {@code mvn clean} removes) for diagnosis. */
    public static final Path LOGS = Path.of("target", "fault-logs");

    /**
     * An exactly-once stamper with the shipped settings (failover within seconds needs no flag) and
     * {@link #FAST_START}, state in
     * {@code <work>/state-<instanceId>} and logs in {@code target/fault-logs/<applicationId>/}.
     */
    public static Stamper of(Path work, String bootstrapServers, String applicationId, Topics topics, String instanceId) {
        // -Dsnowstamp.fault.kafka-log=INFO makes the children log Kafka's own INFO lines, for diagnosis
        String kafkaLog = System.getProperty("snowstamp.fault.kafka-log");
        Map<String, String> env = kafkaLog == null ? Map.of() : Map.of("SNOWSTAMP_LOG_KAFKA_LEVEL", kafkaLog);
        return new Stamper(LOGS.resolve(applicationId), bootstrapServers, applicationId, topics,
                work.resolve("state-" + instanceId), instanceId, Map.of(), List.of(), env, FAST_START);
    }

    /** A copy that logs to {@code dir} (e.g. under target/, kept after the test for diagnosis). */
    public Stamper withLogDir(Path dir) {
        return new Stamper(dir, bootstrapServers, applicationId, topics, stateDir, instanceId, settings, prefix, env, jvmArgs);
    }

    /** A copy with another instance id and its own state directory next to this one's. */
    public Stamper instance(String id) {
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir.resolveSibling("state-" + id), id,
                settings, prefix, env, jvmArgs);
    }

    public Stamper withApplicationId(String id) {
        return new Stamper(logDir, bootstrapServers, id, topics, stateDir, instanceId, settings, prefix, env, jvmArgs);
    }

    /** A copy with one more {@code --set KEY=VALUE}. */
    public Stamper with(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(settings);
        more.put(key, value);
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir, instanceId, more, prefix, env, jvmArgs);
    }

    /**
     * A copy that sets every record of its start aside for about 5 s: the resume point 6 s ahead, at most 1 s of lead, and
     * the lead policy {@code pause} holding them until the clock is within it.
     */
    public Stamper settingRecordsAsideAtStart() {
        return with("recovery.takeover-gap", "6s").with("id.max-lead", "1s").with("id.on-excess-lead", "pause");
    }

    /** A copy with one more environment variable for the child (e.g. {@code SNOWSTAMP_LOG_KAFKA_LEVEL=INFO}). */
    public Stamper withEnv(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(env);
        more.put(key, value);
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir, instanceId, settings, prefix, more, jvmArgs);
    }

    /** A copy whose wall clock is moved by {@code offset} through faketime ({@code -10m}, {@code -1h}). */
    public Stamper withClockOffset(String offset) {
        Map<String, String> more = new LinkedHashMap<>(env);
        more.putAll(Faketime.ENV);
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir, instanceId, settings,
                Faketime.prefix(offset), more, jvmArgs);
    }

    /** A copy whose JVM gets one more flag (e.g. {@code -Dsnowstamp.test.freeze-at-record=N}). */
    public Stamper withJvmArg(String arg) {
        List<String> more = new ArrayList<>(jvmArgs);
        more.add(arg);
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir, instanceId, settings, prefix, env, more);
    }

    /**
     * A copy whose command starts with {@code prefix} (e.g. {@code ip netns exec NS setpriv --reuid=N ...}:
     * in a network namespace under a uid of its own); replaces any earlier prefix.
     */
    public Stamper withPrefix(List<String> prefix) {
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir, instanceId, settings, prefix, env, jvmArgs);
    }

    /** A copy with the real clock. */
    public Stamper withRealClock() {
        Map<String, String> less = new LinkedHashMap<>(env);
        Faketime.ENV.keySet().forEach(less::remove);
        return new Stamper(logDir, bootstrapServers, applicationId, topics, stateDir, instanceId, settings, List.of(), less, jvmArgs);
    }

    /** The arguments of the {@code run} command. */
    public String[] args() {
        List<String> args = new ArrayList<>(List.of("run",
                "--bootstrap-servers", bootstrapServers,
                "--application-id", applicationId,
                "--state-dir", stateDir.toString(),
                "--instance-id", instanceId,
                "--set", "input.topic=" + topics.in(),
                "--set", "output.topic=" + topics.out(),
                "--set", "dlq.topic=" + topics.dlq()));
        if (registryOn() && !settings.containsKey("id.space")) {
            args.add("--set");
            args.add("id.space=" + applicationId);
        }
        settings.forEach((key, value) -> {
            args.add("--set");
            args.add(key + "=" + value);
        });
        return args.toArray(String[]::new);
    }

    /**
     * Whether the child runs with the worker registry, as shipped ({@code id.worker-registry=on}) unless a test
     * turns it off. With it on, every application gets an ID space of its own ({@code id.space=<application id>},
     * unless set): the applications of all tests share one broker and the default {@code id.worker-offset=0}, so in
     * one space all but the first would be refused; each space is still checked, claimed and heart-beaten as in
     * production, in the shipped registry topic.
     */
    private boolean registryOn() {
        return !"off".equals(settings.get("id.worker-registry"));
    }

    private void ensureRegistryTopic() {
        ensureRegistryTopic(bootstrapServers, settings.getOrDefault("registry.topic", "snowstamp-workers"));
    }

    /**
     * The registry topic as {@code topics apply} creates it from topics/snowstamp-workers.properties (once per broker and
     * test JVM), for a child that runs with the registry on the test broker: start it with an {@code id.space} of its own.
     */
    public static void ensureRegistryTopic(String bootstrapServers, String topic) {
        if (!REGISTRIES.add(bootstrapServers + "/" + topic)) {
            return;
        }
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                Map.of(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            // the shipped spec exactly (a cluster test's 'topics apply' then finds no drift on it)
            io.snowstamp.runtime.TopicAdmin.apply(admin, List.of(io.snowstamp.runtime.TopicSpec.named(
                    io.snowstamp.runtime.TopicSpec.load(java.nio.file.Path.of("topics")), topic, "snowstamp-workers")));
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, topic, 1, java.time.Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            REGISTRIES.remove(bootstrapServers + "/" + topic);
            throw e;
        }
    }

    private static final java.util.Set<String> REGISTRIES = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Starts the child JVM and returns at once. */
    public ChildJvm launch() throws IOException {
        if (registryOn()) {
            ensureRegistryTopic();
        }
        return ChildJvm.start(logDir, instanceId + "-" + STARTS.incrementAndGet(), prefix, env, jvmArgs, args());
    }

    /**
     * How long a start may take: a few seconds on an idle machine, far more when the test classes running
     * side by side start JVMs at the same moment on two cores.
     */
    private static final long START_SECONDS = 180;

    /** Starts the child JVM and waits (bounded) until it reports that it is stamping; fails with its logs if it dies first. */
    public ChildJvm start() throws Exception {
        ChildJvm child = launch();
        try {
            child.awaitOutput(STARTED + topics.in(), START_SECONDS);
        } catch (AssertionError | Exception e) {
            child.close();
            throw e;
        }
        return child;
    }

    /**
     * Starts this instance again after it was SIGKILLed, as {@link #start()} does, with one
     * exception handled the way an operator would.
     *
     * <p>Kafka Streams 4.3.1 opens the stores found in the state directory while the
     * {@code KafkaStreams} object is built, and treats any error there other than
     * {@code TaskCorruptedException} as fatal. A SIGKILL in the middle of wiping or re-creating a
     * store can leave a RocksDB directory it cannot open ({@code RocksDBException: While creating a
     * new Db, wal_dir contains existing log file}); {@code run} then exits 1 on every start until
     * the local state is deleted. Deleting it is safe (the state is restored from the changelog,
     * which is what exactly-once does after a crash anyway), so this method does that, tells
     * {@code onRefusal} (tests count and print it), and starts once more. Any other start failure,
     * or a second refusal, fails as usual.
     */
    public ChildJvm restartAfterCrash(Consumer<String> onRefusal) throws Exception {
        ChildJvm child = launch();
        try {
            child.awaitOutput(STARTED + topics.in(), START_SECONDS);
            return child;
        } catch (AssertionError e) {
            child.close();
            String err = child.stderr();
            if (!err.contains("RocksDBException") && !err.contains("Error opening store")) {
                throw e;
            }
            onRefusal.accept(err.lines().filter(line -> line.startsWith("error:")).findFirst().orElse(err));
            deleteRecursively(stateDir);
            return start();
        }
    }

    /** Deletes this instance's local state directory (lost disk, new machine); the instance must not be running. */
    public void deleteStateDir() throws IOException {
        deleteRecursively(stateDir);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
