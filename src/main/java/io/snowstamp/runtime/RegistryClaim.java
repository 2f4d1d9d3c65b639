package io.snowstamp.runtime;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.registry.RegistryLostException;
import io.snowstamp.registry.WorkerRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongUnaryOperator;

/**
 * The stamper's side of the worker registry: claims the worker range before Kafka Streams starts,
 * then re-asserts it from a background thread every {@code registry.heartbeat} (never on the
 * per-record path). Losing the claim (released by someone, or taken after the registry was
 * recreated) is reported to {@code onLost}, which stops the stamper.
 */
final class RegistryClaim implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegistryClaim.class);

    private final WorkerRegistry registry;
    private final WorkerRegistry.Request request;
    private final WorkerRegistry.Lease lease;
    private final ScheduledExecutorService heartbeats;
    /** The heartbeat timeout: the longest the heartbeat under way at the stop, and then the record of the stop, may take. */
    private final Duration stopTimeout;

    private RegistryClaim(WorkerRegistry registry, WorkerRegistry.Request request, WorkerRegistry.Lease lease, Duration stopTimeout) {
        this.registry = registry;
        this.stopTimeout = stopTimeout;
        this.request = request;
        this.lease = lease;
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "snowstamp-registry-heartbeat");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Claims {@code partitions} workers for the application and starts the heartbeat.
     *
     * @throws io.snowstamp.registry.ClaimRefusedException with the one line that says why and what to do
     */
    static RegistryClaim claim(SnowstampConfig config, int partitions, Consumer<RuntimeException> onLost) {
        var settings = config.registry();
        var connection = config.connection();
        var ids = config.ids();
        WorkerRegistry registry = new WorkerRegistry(KafkaSettings.client(connection), settings.topic(),
                config.recovery().tailGuardTimeout(), System::currentTimeMillis);
        try {
            WorkerRegistry.Request request = new WorkerRegistry.Request(settings.space(), ids.datacenterId(), connection.applicationId(),
                    ids.layout(), partitions, settings.autoOffset() ? -1 : ids.workerOffset(), config.topics().input(),
                    config.topics().output(), connection.instanceId(), settings.expireAfter(), settings.grace());
            WorkerRegistry.Lease lease = registry.claim(request);
            log.atInfo().addKeyValue("event", "workers-claimed").addKeyValue("firstWorker", lease.firstWorker())
                    .addKeyValue("count", lease.count())
                    .log("worker registry {}: {} in ID space {}, datacenter {}{}{}", settings.topic(), lease.how(), settings.space(),
                            ids.datacenterId(), settings.autoOffset() ? " (id.worker-offset=auto chose " + lease.firstWorker() + ")" : "",
                            lease.marks().values().stream().anyMatch(mark -> mark >= 0)
                                    ? "; released marks to resume above: " + lease.marks() : "");
            RegistryClaim claim = new RegistryClaim(registry, request, lease, settings.heartbeatTimeout());
            long every = settings.heartbeat().toMillis();
            // a fixed delay, and each heartbeat bounded by its timeout: what the grace of a claimant after a
            // recreated registry counts on (RegistrySettings.grace)
            claim.heartbeats.scheduleWithFixedDelay(() -> claim.beat(onLost, settings.heartbeatTimeout()), every, every,
                    TimeUnit.MILLISECONDS);
            return claim;
        } catch (RuntimeException e) {
            registry.close();
            throw e;
        }
    }

    private void beat(Consumer<RuntimeException> onLost, Duration timeout) {
        try {
            registry.heartbeat(request, lease, timeout);
        } catch (RegistryLostException e) {
            log.error("worker registry: {}: stopping the stamper (it never stamps with an unclaimed worker)", e.getMessage());
            onLost.accept(e);
            heartbeats.shutdown();
        } catch (RuntimeException e) {
            // the registry unreachable for a while: the claim stands (nobody else can be granted it), try again next time
            log.warn("worker registry heartbeat failed, trying again at the next one: {}", Errors.oneLine(e));
        }
    }

    /** The first worker granted: the effective {@code id.worker-offset}. */
    long firstWorker() {
        return lease.firstWorker();
    }

    /**
     * worker -> the highest ID a released claim recorded for it (-1: none): tasks resume above it.
     * Asked once per task start; a worker outside the claim (partitions added while running) fails
     * the task, so the stamper stops rather than stamp with an unclaimed worker, and its next start
     * extends the claim or explains why it cannot.
     */
    LongUnaryOperator marks() {
        long first = lease.firstWorker();
        long end = first + lease.count();
        return worker -> {
            if (worker < first || worker >= end) {
                throw new RegistryLostException("worker " + worker + " is outside the claimed workers " + first + ".." + (end - 1)
                        + " (the input grew while the stamper ran): stopping; start again to extend the claim in the worker registry");
            }
            return lease.markOf(worker);
        };
    }

    /** Stops the heartbeat and records a clean stop (so that {@code workers release} needs no --force). */
    @Override
    public void close() {
        heartbeats.shutdown();      // a heartbeat under way finishes: interrupting it would only leave a half-done write
        try {
            if (!heartbeats.awaitTermination(stopTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                heartbeats.shutdownNow();
            }
            registry.stopped(lease, stopTimeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.warn("could not record the clean stop in the worker registry: {}", Errors.oneLine(e));
        } finally {
            registry.close();
        }
    }
}
