package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseVerifier;
import io.snowstamp.resume.TailPrefetch;
import io.snowstamp.schema.HttpSchemaRegistry;
import io.snowstamp.schema.RegistryUnavailableException;
import io.snowstamp.stream.DeadLetterHandler;
import io.snowstamp.ownership.EarlyLeases;
import io.snowstamp.stream.StamperStats;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Runs the stamper as three named calls — {@link #start}, {@link #awaitTermination},
 * {@link #close} — and surfaces its death: an error that kills Kafka Streams is kept and rethrown
 * by {@link #awaitTermination}, so {@code run} exits 1 with the reason instead of idling.
 */
public final class StreamsRunner implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StreamsRunner.class);
    /** The longest a clean stop waits for its tasks' last IDs to be written before it closes Kafka Streams. */
    static final Duration LAST_IDS_WAIT = Duration.ofSeconds(5);

    /** Not final: with id.worker-offset=auto the registry's grant replaces the offset at start. */
    private SnowstampConfig config;
    private final LongSupplier clock;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final CountDownLatch running = new CountDownLatch(1);
    private volatile KafkaStreams streams;
    private volatile StamperTopology topology;
    /** Held partitions that stop stamping with input waiting (null: off, or sequence mode). */
    private StallWatch stallWatch;
    private final StamperStats stats = new StamperStats();
    private final RestoreTracker restores = new RestoreTracker();
    private final StartStats startStats = new StartStats();
    private final AbortRaceRecovery abortRace = new AbortRaceRecovery(() -> System.nanoTime() / 1_000_000);
    private String applicationServer;
    private RegistryClaim registryClaim;
    private java.util.function.LongUnaryOperator registryMarks = worker -> -1;

    public StreamsRunner(SnowstampConfig config, LongSupplier clock) {
        this.config = config;
        this.clock = clock;
    }

    /**
     * Advertises {@code host:port} as this instance's {@code application.server}, so other instances
     * find its admin server through Kafka Streams' metadata (interactive queries). Before {@link #start}.
     */
    public void advertise(String hostPort) {
        this.applicationServer = hostPort;
    }

    /** Checks the topics, claims the workers, then starts Kafka Streams; returns without waiting for it to run. */
    public void start() {
        checkSchemaRegistry();
        TopicPreflight.Checked checked = TopicPreflight.check(config);
        int outputPartitions = checked.outputPartitions();
        if (config.idMode() == SnowstampConfig.IdMode.SNOWFLAKE) {
            claimWorkers(outputPartitions);
        }
        log.info("starting stamper: {}", config.describeMasked());
        Properties props = KafkaSettings.streams(config.connection(), config.topics(), outputPartitions);
        log.info("internal topics Kafka Streams creates (worker-state changelog): {}",
                KafkaSettings.internalTopics(props, config.connection(), checked.replication()));
        props.put(DeadLetterHandler.STATS_CONFIG, stats);
        if ("streams".equalsIgnoreCase(props.getProperty(StreamsConfig.GROUP_PROTOCOL_CONFIG))
                && StreamsConfig.EXACTLY_ONCE_V2.equals(props.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG))) {
            log.warn("group.protocol=streams: a commit of records without input offsets (records set aside, stamped after a"
                    + " start while the input is idle) is not checked against the group generation (design.md, \"a commit"
                    + " without offsets\"); the classic protocol checks it");
        }
        if (applicationServer != null) {
            props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, applicationServer);
        }
        topology = StamperTopology.build(config, clock, stats, registryMarks, outputPartitions);
        restores.feed(topology.prefetch());
        restores.feed(topology.leases());
        restores.feed(topology.fence());
        restores.feed(topology.early());
        try {
            streams = listen(newStreams(props));
            streams.start();
        } catch (org.apache.kafka.streams.errors.ProcessorStateException e) {
            if (!LocalStateWipe.unreadableStore(e)) {
                throw e;
            }
            java.nio.file.Path dir = java.nio.file.Path.of(props.getProperty(StreamsConfig.STATE_DIR_CONFIG));
            log.warn("local state in {} cannot be opened ({}); wiping it once: it is restored from the changelog",
                    dir, Errors.oneLine(e));
            KafkaStreams broken = streams;
            streams = null;                 // its listeners ignore it from now on
            broken.close(Duration.ofSeconds(10));
            LocalStateWipe.wipe(dir);
            streams = listen(newStreams(props));
            streams.start();
        }
        Duration stallAfter = config.recovery().stallAfter();
        if (!stallAfter.isZero() && config.idMode() == SnowstampConfig.IdMode.SNOWFLAKE) {
            stallWatch = new StallWatch(KafkaSettings.client(config.connection()), config.connection().applicationId(),
                    config.topics().input(), stats, startStats.undelivered(), stallAfter, this::isRunning,
                    new StreamThreadRestart(() -> streams, stats, this::stopStuck));
        }
    }

    private boolean isRunning() {
        KafkaStreams current = streams;
        return current != null && current.state() == KafkaStreams.State.RUNNING;
    }

    /** A stalled thread would not stop and no task progressed ({@link StreamThreadRestart}): keep the error, stop the stamper. */
    private void stopStuck(SnowstampException stuck) {
        failure.compareAndSet(null, stuck);
        log.error(stuck.getMessage());
        Thread stopper = new Thread(() -> close(Duration.ofSeconds(30)), "snowstamp-stall-stop");
        stopper.setDaemon(true);
        stopper.start();
    }

    private KafkaStreams newStreams(Properties props) {
        return new KafkaStreams(topology.topology(), props,
                topology.clients(new StreamsConfig(props).getKafkaClientSupplier(), startStats, stats::beforePoll));
    }

    private KafkaStreams listen(KafkaStreams instance) {
        instance.setUncaughtExceptionHandler(thrown -> {
            Throwable error = Errors.namingTransactionalIds(thrown, config.connection().applicationId());
            if (abortRace.replace(error)) {
                log.warn("stream thread replaced: its commit raced the transaction coordinator's own abort of the transaction"
                        + " (rolled back, nothing of it visible; KAFKA-20785): {}", Errors.oneLine(error));
                return StreamThreadExceptionResponse.REPLACE_THREAD;
            }
            failure.compareAndSet(null, error);
            if (Errors.explained(error)) {  // a refusal written for people (a layout change...): its stack trace says nothing more
                log.error("stamper stopping after an unrecoverable error: {}", Errors.oneLine(error));
                log.debug("stack trace of the error above", error);
            } else {
                log.error("stamper stopping after an unrecoverable error: {}", Errors.oneLine(error), error);
            }
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        instance.setGlobalStateRestoreListener(restores);
        instance.setStateListener((now, before) -> {
            if (instance != streams) {
                return;     // a retired instance (wiped local state, see start)
            }
            log.atInfo().addKeyValue("event", "streams-state").addKeyValue("state", now)
                    .log("stamper {} -> {} (tasks: {})", before, now, stats.tasks().keySet());
            TailPrefetch prefetch = topology == null ? null : topology.prefetch();
            if (prefetch != null && now != KafkaStreams.State.RUNNING) {
                // a rebalance (or the end): nothing read ahead before it is used; the restores that follow make tasks ready anew
                prefetch.dropAll();
            }
            if (now == KafkaStreams.State.RUNNING) {
                running.countDown();
            }
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
                terminated.countDown();
                running.countDown();
            }
        });
        return instance;
    }

    /**
     * Avro and Protobuf values: wrong credentials or a URL that is no registry stop the start (one line, exit 2);
     * a registry that does not answer yet does not: values wait for it.
     */
    private void checkSchemaRegistry() {
        if (!config.stamp().schemaRegistryValues()) {
            return;
        }
        try {
            HttpSchemaRegistry.of(config.schemaRegistry()).check();
        } catch (RegistryUnavailableException e) {
            log.warn("the schema registry does not answer yet ({}); values of each new schema wait for it", e.getMessage());
        }
    }

    /**
     * Claims the worker range in the registry before Kafka Streams starts (or warns that nothing
     * checks it); with {@code auto} the granted offset becomes the configuration's.
     */
    private void claimWorkers(int partitions) {
        if (!config.registry().enabled()) {
            log.warn("id.worker-registry=off: nothing checks that workers {}..{} (id.worker-offset={}) are used by no other application"
                            + " whose IDs meet this one's; overlapping ranges issue duplicate IDs silently",
                    config.ids().workerFor(0), config.ids().workerFor(partitions - 1), config.ids().workerOffset());
            return;
        }
        registryClaim = RegistryClaim.claim(config, partitions, this::registryLost);
        config = config.withWorkerOffset(registryClaim.firstWorker());
        registryMarks = registryClaim.marks();
    }

    /** The claim is gone: stop stamping now (from the heartbeat thread). */
    private void registryLost(RuntimeException error) {
        failure.compareAndSet(null, error);
        KafkaStreams current = streams;
        if (current != null) {
            Thread stopper = new Thread(() -> current.close(Duration.ofSeconds(30)), "snowstamp-registry-stop");
            stopper.setDaemon(true);
            stopper.start();
        }
    }

    /** Waits until Kafka Streams is RUNNING; rethrows its failure if it died first. */
    public boolean awaitRunning(Duration timeout) throws InterruptedException {
        boolean reached = running.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        rethrowFailure();
        return reached && streams.state() == KafkaStreams.State.RUNNING;
    }

    /** Blocks until Kafka Streams stops (after {@link #close} or an error); rethrows the error. */
    public void awaitTermination() throws InterruptedException {
        terminated.await();
        rethrowFailure();
    }

    /**
     * Like {@link #awaitTermination()}, bounded.
     *
     * @return whether Kafka Streams stopped within the timeout
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        boolean stopped = terminated.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        rethrowFailure();
        return stopped;
    }

    public KafkaStreams.State state() {
        return streams == null ? KafkaStreams.State.CREATED : streams.state();
    }

    /** Whether this runner numbers per tag ({@code id.mode=sequence}) rather than issuing snowflake IDs. */
    public boolean sequenceMode() {
        return config.idMode() == SnowstampConfig.IdMode.SEQUENCE;
    }

    /** The effective {@code id.worker-offset}: the configured one, or the one the registry granted ({@code auto}). */
    public long workerOffset() {
        return config.ids().workerOffset();
    }

    /**
     * The last Unix millisecond the configured ID layout can stamp (its time field runs out after it), or empty in
     * sequence mode, which issues no snowflake IDs.
     */
    public OptionalLong layoutEndMillis() {
        return sequenceMode() ? OptionalLong.empty() : OptionalLong.of(config.ids().layout().maxWallMillis());
    }

    /** What the tasks of this instance do (metrics, health, state endpoint). */
    public StamperStats stats() {
        return stats;
    }

    /** Restores of the worker-state store by this instance (metrics). */
    public RestoreTracker restores() {
        return restores;
    }

    /** What the batched task-start reads did (tests, logs); all zero without a tail guard or before {@link #start}. */
    public TailPrefetch.Stats tailPrefetch() {
        StamperTopology current = topology;
        return current == null || current.prefetch() == null ? new TailPrefetch.Stats(0, 0, 0, 0) : current.prefetch().stats();
    }

    /** What the main consumers did for starting tasks (tests: committed-offset requests, inputs held for leases). */
    public StartStats taskStarts() {
        return startStats;
    }

    /** Rounds of the lease verifier so far (0 without a lease or before {@link #start}). */
    public long leaseRounds() {
        StamperTopology current = topology;
        return current == null || current.leases() == null ? 0 : current.leases().rounds();
    }

    /** How far this instance's lease reader is behind ({@code NONE} without a lease or before {@link #start}). */
    public LeaseVerifier.ReaderLag leaseReaderLag() {
        StamperTopology current = topology;
        return current == null || current.leases() == null ? LeaseVerifier.ReaderLag.NONE : current.leases().lag();
    }

    /** Times a stream thread waited in a task's first check for its lease's takeover (0 without a lease). */
    public long leaseTakeoverParks() {
        StamperTopology current = topology;
        return current == null || current.leases() == null ? 0 : current.leases().takeoverParks();
    }

    /**
     * Whether the task of input partition {@code partition} here still waits for its lease: taken, but not yet past the
     * previous owner's term (readiness: such a partition issues nothing yet).
     */
    public boolean awaitingLease(int partition) {
        StamperTopology current = topology;
        return current != null && current.awaitingTakeover(partition);
    }

    /** What became of the leases taken when restores ended (tests: taken, adopted by their task's start, dropped). */
    public EarlyLeases.Stats earlyLeases() {
        StamperTopology current = topology;
        return current == null || current.early() == null ? new EarlyLeases.Stats(0, 0, 0) : current.early().stats();
    }

    /** The error that killed Kafka Streams, or null. */
    public Throwable failure() {
        return failure.get();
    }

    /** The running KafkaStreams instance (for metrics and tests); null before {@link #start}. */
    public KafkaStreams streams() {
        return streams;
    }

    private void rethrowFailure() {
        Throwable error = failure.get();
        if (error != null) {
            throw new SnowstampException(Errors.oneLine(error), error);
        }
    }

    /** Commits in-flight work and stops, waiting up to {@code timeout}. */
    public synchronized void close(Duration timeout) {
        if (stallWatch != null) {     // first: no thread restart while stopping
            stallWatch.close();
            stallWatch = null;
        }
        if (streams != null) {
            long started = System.nanoTime();
            log.atInfo().addKeyValue("event", "shutdown").addKeyValue("tasks", stats.tasks().keySet())
                    .log("stamper stopping: committing in-flight work of tasks {} (up to {})", stats.tasks().keySet(),
                            io.snowstamp.config.Durations.format(timeout));
            // a task waiting for the schema registry stops waiting (its record stays unprocessed: nothing is lost)
            stats.schemaRegistry().stop();
            // the last commits write every task's exact last ID: the changelog names it after a clean stop. Where commits
            // skip it (exactly-once with the tail guard) each thread writes them at its next stop check: wait for that
            stats.stopping();
            awaitLastIds(stats, timeout);
            // leave the group: the partitions move to the other instances now, not after the session timeout
            boolean clean = streams.close(CloseOptions.timeout(timeout)
                    .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
            if (!clean) {
                log.warn("stamper did not stop within {}", timeout);
            } else {
                log.atInfo().addKeyValue("event", "stopped")
                        .log("stamper stopped cleanly in {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            }
            terminated.countDown();
        }
        if (topology != null) {
            topology.close();
            topology = null;
        }
        if (registryClaim != null) {
            registryClaim.close();
            registryClaim = null;
        }
    }

    /**
     * At most half the stop's time, and 5 s: a thread held in a long wait writes its tasks' last IDs when it commits.
     * @return how many tasks' last IDs were left unwritten (WARNed when any); -1 when interrupted
     */
    static int awaitLastIds(StamperStats stats, Duration timeout) {
        Duration limit = timeout.dividedBy(2).compareTo(LAST_IDS_WAIT) < 0 ? timeout.dividedBy(2) : LAST_IDS_WAIT;
        try {
            int unwritten = stats.awaitLastIds(limit);
            if (unwritten > 0) {
                log.warn("{} tasks' last IDs not written within {}: the changelog's lastId of their partitions stays what"
                        + " their last heartbeat or reservation saw", unwritten, io.snowstamp.config.Durations.format(limit));
            }
            return unwritten;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(30));
    }
}
