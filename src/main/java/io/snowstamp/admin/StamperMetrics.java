package io.snowstamp.admin;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.snowstamp.runtime.RestoreTracker;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.resume.ResumeDecision;
import io.snowstamp.stream.StamperStats;
import io.snowstamp.stream.TaskStats;
import org.apache.kafka.streams.KafkaStreams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;

/**
 * snowstamp's metrics plus Kafka Streams' own (Micrometer's Kafka Streams binder) in one
 * Prometheus registry. Meters per partition are registered when a partition first shows up;
 * counters keep counting across task restarts ({@link StamperStats#totals()}), gauges of a task
 * disappear with it. {@link #scrape} is synchronized: one scrape at a time sees one snapshot.
 */
final class StamperMetrics implements AutoCloseable {
    /** How often the Kafka Streams binder looks for new Kafka metrics (tasks add theirs after assignment). */
    private static final Duration KAFKA_METRICS_REFRESH = Duration.ofSeconds(10);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final StreamsRunner runner;
    private final LongSupplier clock;
    private final ScheduledExecutorService scheduler;
    private final Set<Integer> counted = new HashSet<>();
    private final Set<String> sources = new HashSet<>();
    private final Map<Integer, List<Meter>> taskGauges = new HashMap<>();
    private final Map<Integer, TaskStats> gaugedTasks = new HashMap<>();
    private final Map<Integer, List<Meter>> stallGauges = new HashMap<>();
    private final Set<Integer> restoreGauges = new HashSet<>();
    private final JvmGcMetrics jvmGc = new JvmGcMetrics();
    private KafkaStreamsMetrics kafkaStreamsMetrics;
    private volatile Map<Integer, StamperStats.Totals> totals = Map.of();
    private volatile Map<String, Long> resumes = Map.of();
    private volatile Map<Integer, TaskStats> live = Map.of();
    private volatile Map<Integer, RestoreTracker.Restore> restores = Map.of();
    private volatile long now;

    /**
     * @param application the application.id: label {@code application} of every series, so that the alert rules tell
     *                    two applications scraped by one job apart
     */
    StamperMetrics(StreamsRunner runner, String application, LongSupplier clock) {
        this.runner = runner;
        this.clock = clock;
        registry.config().commonTags("application", application);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(AdminServer.daemonThreads("snowstamp-metrics"));
        // the JVM's heap, GC pauses and CPU, for the dashboard's JVM panels (jvm_*, process_*)
        new JvmMemoryMetrics().bindTo(registry);
        jvmGc.bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        StamperStats stats = runner.stats();
        for (io.snowstamp.BadRecordException.Code reason : io.snowstamp.BadRecordException.Code.values()) {
            // one series per reason, every one from the start: a rule or panel sees 0, not nothing, before the first
            FunctionCounter.builder("snowstamp.dead.letters", stats, s -> s.deadLetters(reason))
                    .tag("reason", reason.header())
                    .description("records routed to the dead-letter topic, by reason (header snowstamp-error)").register(registry);
        }
        FunctionCounter.builder("snowstamp.lease.waits", stats, StamperStats::leaseWaits)
                .description("waits of a partition's next ID for its lease (a record that came during a takeover, a confirmation that came late); its records wait set aside")
                .register(registry);
        FunctionCounter.builder("snowstamp.lease.wait.seconds", stats, StamperStats::leaseWaitSeconds)
                .description("time partitions' next IDs waited for their lease (records set aside meanwhile)").register(registry);
        FunctionCounter.builder("snowstamp.tasks.started", stats, StamperStats::tasksStarted)
                .description("task starts (restarts and rebalances included)").register(registry);
        FunctionCounter.builder("snowstamp.reservation.waits", stats, StamperStats::reservationWaits)
                .description("IDs that waited for their write-ahead reservation to be acknowledged and read back (renewals keep busy tasks ahead)")
                .register(registry);
        FunctionCounter.builder("snowstamp.reservation.wait.seconds", stats, StamperStats::reservationWaitSeconds)
                .description("time IDs waited for their write-ahead reservation to be acknowledged and read back").register(registry);
        FunctionCounter.builder("snowstamp.schema.registry.failures", stats, s -> s.schemaRegistry().failures())
                .description("schema registry requests that found it unreachable or failing (each retried)").register(registry);
        Gauge.builder("snowstamp.schema.registry.waiting", stats, s -> s.schemaRegistry().waitingSince() >= 0 ? 1 : 0)
                .description("1 while a task waits for the schema registry to stamp a value of a new schema").strongReference(true)
                .register(registry);
        // the lease reader's lag (issue 42): a confirmation older than the term (1.5 s) makes the partition's next ID wait
        Gauge.builder("snowstamp.lease.reader.confirmation.age", runner, r -> r.leaseReaderLag().oldestConfirmationNanos() / 1e9)
                .description("longest time since a lease held here was last confirmed by reading the changelog back (since it was"
                        + " taken, while never confirmed); above the lease term (1.5 s) that partition's next ID waits")
                .baseUnit("seconds").strongReference(true).register(registry);
        Gauge.builder("snowstamp.lease.reader.round", runner, r -> r.leaseReaderLag().roundNanos() / 1e9)
                .description("how long the lease reader's last round took: the changelog's committed ends asked, then read up to them")
                .baseUnit("seconds").strongReference(true).register(registry);
        Gauge.builder("snowstamp.lease.reader.behind.partitions", runner, r -> r.leaseReaderLag().behind())
                .description("held partitions the lease reader's last round could not read up to their committed end in time")
                .strongReference(true).register(registry);
        // a wait in progress (issue 44): the wait counters above count a wait when it ends, so one that never ends moves neither
        Gauge.builder("snowstamp.id.wait.oldest", this, m -> millisToSeconds(m.live.values().stream()
                        .mapToLong(t -> t.millisWaiting(m.now)).max().orElse(0)))
                .description("how long the longest wait in progress of a partition's next ID (for its lease or its reservation,"
                        + " its records set aside) has lasted so far; 0 while none waits")
                .baseUnit("seconds").strongReference(true).register(registry);
        Gauge.builder("snowstamp.stalled.partitions", stats, s -> s.stalls().stalled().size())
                .description("partitions held here with input waiting that issued nothing for recovery.stall-after")
                .strongReference(true).register(registry);
        FunctionCounter.builder("snowstamp.stall.restarts", stats, s -> s.stalls().restarts())
                .description("stream thread restarts for stalled partitions").register(registry);
        runner.layoutEndMillis().ifPresent(end -> Gauge.builder("snowstamp.id.layout.end.timestamp", () -> millisToSeconds(end))
                .description("Unix time at which the ID layout's time field runs out: the stamper stops stamping then")
                .baseUnit("seconds").strongReference(true).register(registry));
        Gauge.builder("snowstamp.tasks", this, m -> m.live.size())
                .description("tasks (partitions) this instance stamps now").strongReference(true).register(registry);
        Gauge.builder("snowstamp.ready", this, m -> m.runner.state() == KafkaStreams.State.RUNNING ? 1 : 0)
                .description("1 while Kafka Streams is RUNNING").strongReference(true).register(registry);
        Gauge.builder("snowstamp.rebalancing", this, StamperMetrics::rebalancing)
                .description("1 while Kafka Streams is REBALANCING (partitions are being moved)").strongReference(true).register(registry);
    }

    /** The Prometheus text exposition (or OpenMetrics when {@code accept} asks for it). */
    synchronized String scrape(String accept) {
        refresh();
        return registry.scrape(accept == null ? "" : accept);
    }

    /** The content type {@link #scrape} answers with for an Accept header. */
    static String contentType(String accept) {
        return accept != null && accept.contains("application/openmetrics-text")
                ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                : "text/plain; version=0.0.4; charset=utf-8";
    }

    private void refresh() {
        KafkaStreams streams = runner.streams();
        if (kafkaStreamsMetrics == null && streams != null) {
            kafkaStreamsMetrics = new KafkaStreamsMetrics(streams, Tags.empty(), scheduler, KAFKA_METRICS_REFRESH);
            kafkaStreamsMetrics.bindTo(registry);
        }
        StamperStats stats = runner.stats();
        now = clock.getAsLong();
        totals = stats.totals();
        resumes = stats.resumesBySource();
        live = stats.tasks();
        restores = runner.restores().completed();
        totals.keySet().forEach(this::registerCounters);
        resumes.keySet().forEach(this::registerResumeCounter);
        restores.keySet().forEach(this::registerRestoreGauges);
        syncTaskGauges();
        syncStallGauges();
    }

    private Tags partitionTags(int partition) {
        return Tags.of("partition", Integer.toString(partition), "worker", Long.toString(runner.workerOffset() + partition));
    }

    private void registerCounters(int partition) {
        if (!counted.add(partition)) {
            return;
        }
        Tags tags = partitionTags(partition);
        counter("snowstamp.ids.issued", "IDs issued", tags, partition, StamperStats.Totals::issued);
        counter("snowstamp.clock.behind.events", "IDs issued while the wall clock was behind the generator's time",
                tags, partition, StamperStats.Totals::clockBehindEvents);
        counter("snowstamp.sequence.borrowed.units", "time units borrowed from the future because a unit's sequence ran out",
                tags, partition, StamperStats.Totals::borrowedUnits);
        counter("snowstamp.excess.lead.events", "IDs (or pauses) past id.max-lead", tags, partition,
                StamperStats.Totals::excessLeadEvents);
    }

    private void counter(String name, String description, Tags tags, int partition, ToDoubleFunction<StamperStats.Totals> value) {
        FunctionCounter.builder(name, this, m -> {
                    StamperStats.Totals t = m.totals.get(partition);
                    return t == null ? 0 : value.applyAsDouble(t);
                })
                .description(description).tags(tags).register(registry);
    }

    private void registerResumeCounter(String source) {
        if (sources.add(source)) {
            FunctionCounter.builder("snowstamp.resumes", this, m -> m.resumes.getOrDefault(source, 0L))
                    .description("task starts by the input that decided the resume point (state.lastId,"
                            + " state.reservedUntil, tail, clock; +gap when the takeover gap was added)")
                    .tag("source", source).register(registry);
        }
    }

    private void registerRestoreGauges(int partition) {
        if (!restoreGauges.add(partition)) {
            return;
        }
        Tags tags = partitionTags(partition);
        Gauge.builder("snowstamp.restore.duration", this, m -> millisToSeconds(m.restores.get(partition).millis()))
                .description("duration of the last restore of the worker-state store from its changelog")
                .baseUnit("seconds").tags(tags).strongReference(true).register(registry);
        Gauge.builder("snowstamp.restore.records", this, m -> m.restores.get(partition).records())
                .description("changelog records read by the last restore").tags(tags).strongReference(true).register(registry);
    }

    /** Gauges follow the running tasks: registered when a task starts, removed when it closes. */
    private void syncTaskGauges() {
        for (Integer partition : new ArrayList<>(taskGauges.keySet())) {
            TaskStats current = live.get(partition);
            if (current != gaugedTasks.get(partition)) {
                taskGauges.remove(partition).forEach(registry::remove);
                gaugedTasks.remove(partition);
            }
        }
        live.forEach((partition, task) -> {
            ResumeDecision resume = task.resume();
            if (resume == null || taskGauges.containsKey(partition)) {
                return;
            }
            Tags tags = partitionTags(partition);
            List<Meter> meters = new ArrayList<>();
            meters.add(Gauge.builder("snowstamp.clock.lead", task, t -> millisToSeconds(t.leadMillis(now)))
                    .description("how far the last ID's time runs ahead of the wall clock (negative: behind, e.g. idle)")
                    .baseUnit("seconds").tags(tags).strongReference(true).register(registry));
            meters.add(Gauge.builder("snowstamp.held.back.records", task, TaskStats::heldBack)
                    .description("records held back by id.on-excess-lead=pause").tags(tags).strongReference(true).register(registry));
            meters.add(Gauge.builder("snowstamp.since.last.stamp", task, t -> millisToSeconds(t.millisSinceLastStamp(now)))
                    .description("time since the task last stamped a record (since it started, if none): grows on a"
                            + " stall, and on an idle input").baseUnit("seconds").tags(tags).strongReference(true).register(registry));
            meters.add(Gauge.builder("snowstamp.partition.rebalancing", this, StamperMetrics::rebalancing)
                    .description("1 while the instance running the partition is REBALANCING").tags(tags).strongReference(true)
                    .register(registry));
            meters.add(Gauge.builder("snowstamp.lease.epoch", task, TaskStats::epoch)
                    .description("lease epoch of the running task").tags(tags).strongReference(true).register(registry));
            meters.add(Gauge.builder("snowstamp.tail.guard.duration", resume, r -> millisToSeconds(r.tail().millis()))
                    .description("how long the tail guard read the output partition at task start")
                    .baseUnit("seconds").tags(tags).strongReference(true).register(registry));
            meters.add(Gauge.builder("snowstamp.resume.source", resume, r -> 1)
                    .description("1, labelled with the input that decided the running task's resume point")
                    .tags(tags.and("source", resume.source())).strongReference(true).register(registry));
            taskGauges.put(partition, meters);
            gaugedTasks.put(partition, task);
        });
    }

    /**
     * The stall watch's two gauges follow the partitions of the running tasks and those the watch last looked at: a
     * stall's figures stay while the stream threads it restarts give the partition up and take it again (registered with
     * the task, they were gone at once, and a scrape right after the stall showed none: StallIT under CI's load).
     */
    private void syncStallGauges() {
        Set<Integer> wanted = new HashSet<>(runner.stats().stalls().watched());
        live.forEach((partition, task) -> {
            if (task.resume() != null) {
                wanted.add(partition);
            }
        });
        for (var gauged = stallGauges.entrySet().iterator(); gauged.hasNext(); ) {
            var entry = gauged.next();
            if (!wanted.contains(entry.getKey())) {
                entry.getValue().forEach(registry::remove);
                gauged.remove();
            }
        }
        for (int partition : wanted) {
            if (stallGauges.containsKey(partition)) {
                continue;
            }
            Tags tags = partitionTags(partition);
            stallGauges.put(partition, List.of(
                    Gauge.builder("snowstamp.input.waiting.records", runner.stats(), s -> s.stalls().waiting(partition))
                            .description("input records past the group's committed offset, as the stall watch last read them"
                                    + " (0 without the stall watch)").tags(tags).strongReference(true).register(registry),
                    Gauge.builder("snowstamp.input.stuck", runner.stats(), s -> millisToSeconds(s.stalls().stuckMillis(partition)))
                            .description("how long the input has waited past the committed offset with no progress (no ID issued,"
                                    + " the committed offset unmoved: dead letters are progress) while the task runs, as the stall"
                                    + " watch last judged it; 0 on an idle input, and without the stall watch").baseUnit("seconds")
                            .tags(tags).strongReference(true).register(registry)));
        }
    }

    private double rebalancing() {
        return runner.state() == KafkaStreams.State.REBALANCING ? 1 : 0;
    }

    private static double millisToSeconds(long millis) {
        return millis / 1000.0;
    }

    @Override
    public synchronized void close() {
        if (kafkaStreamsMetrics != null) {
            kafkaStreamsMetrics.close();
        }
        jvmGc.close();
        scheduler.shutdownNow();
        registry.close();
    }
}
