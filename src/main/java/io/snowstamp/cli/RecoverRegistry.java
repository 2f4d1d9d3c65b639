package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.recovery.ResumePlan;
import io.snowstamp.registry.HandOver;
import io.snowstamp.registry.RegistryView;
import io.snowstamp.registry.WorkerRegistry;
import io.snowstamp.runtime.KafkaSettings;
import org.apache.kafka.clients.admin.Admin;

import java.time.Duration;
import java.util.List;

/**
 * The worker registry's side of {@code recover}: which workers the recovery is about (the source's
 * claim), and the {@link HandOver} of those workers to a new application id. With the registry off
 * or its topic missing, the plan is made on an empty registry (the configured offset decides) and
 * nothing is written. Not thread-safe; one per command run.
 */
final class RecoverRegistry implements AutoCloseable {
    private final SnowstampConfig config;
    private final Duration limit;
    /** Null when the registry is off or its topic does not exist. */
    private final WorkerRegistry registry;
    private final String absent;

    private RecoverRegistry(SnowstampConfig config, Duration limit, WorkerRegistry registry, String absent) {
        this.config = config;
        this.limit = limit;
        this.registry = registry;
        this.absent = absent;
    }

    static RecoverRegistry open(SnowstampConfig config, Admin admin, Duration limit) {
        String topic = config.registry().topic();
        if (!config.registry().enabled()) {
            return new RecoverRegistry(config, limit, null, "worker registry: off (id.worker-registry=off): nothing handed over");
        }
        if (ChangelogWriter.partitionCount(admin, topic, limit).isEmpty()) {
            return new RecoverRegistry(config, limit, null, "worker registry " + topic + " does not exist: nothing handed over;"
                    + " create it with 'snowstamp topics apply' before the stamper starts");
        }
        return new RecoverRegistry(config, limit, new WorkerRegistry(KafkaSettings.client(config.connection()), topic, limit,
                System::currentTimeMillis), null);
    }

    /** The plan on the registry as it is now (an empty one when off or missing). */
    HandOver plan(String source, String target, String output, int partitions, boolean force) {
        return HandOver.plan(view(), request(source, target, output, partitions, force));
    }

    private RegistryView view() {
        return registry == null ? new RegistryView(List.of(), "") : registry.readable().view();
    }

    private HandOver.Request request(String source, String target, String output, int partitions, boolean force) {
        var ids = config.ids();
        return new HandOver.Request(config.registry().space(), ids.datacenterId(), source, target, ids.layout(),
                config.registry().autoOffset() ? -1 : ids.workerOffset(), partitions, output, System.currentTimeMillis(),
                config.registry().staleAfter(), force);
    }

    /** One line about the registry, or null when there is nothing to say (the same application without a registry). */
    String describe(HandOver plan, boolean applied) {
        if (registry == null) {
            return plan.source().equals(plan.target()) ? null : absent;
        }
        return plan.describe(config.registry().topic(), applied);
    }

    /**
     * Checks, on the registry read again, that {@code --apply} may hand over what the dry run
     * planned; call before writing anything.
     *
     * @throws SnowstampException when the registry refuses, or changed since the plan (run recover again)
     */
    HandOver recheck(HandOver planned, String output, int partitions, boolean force) {
        HandOver now = plan(planned.source(), planned.target(), output, partitions, force);
        if (now.kind() == HandOver.Kind.REFUSED && registry != null) {
            throw new SnowstampException("nothing written: " + now.refusal());
        }
        if (now.kind() != planned.kind() || now.firstWorker() != planned.firstWorker() || now.count() != planned.count()) {
            throw new SnowstampException("nothing written: the worker registry " + config.registry().topic() + " changed while recover"
                    + " read the changelog and the output (" + planned.describe(config.registry().topic(), false) + "; now: "
                    + now.describe(config.registry().topic(), false) + "): run recover again");
        }
        return now;
    }

    /**
     * Writes the hand-over (nothing for the same application, or without a registry).
     *
     * @return the line that says what was done, or null when there is nothing to say
     */
    String apply(HandOver plan, ResumePlan resume) {
        if (registry == null || (plan.kind() != HandOver.Kind.HAND_OVER && plan.kind() != HandOver.Kind.CLAIM)) {
            return describe(plan, true);
        }
        RegistryView view = registry.readable().view();
        var ids = config.ids();
        WorkerRegistry.Request target = new WorkerRegistry.Request(plan.space(), plan.datacenter(), plan.target(), ids.layout(),
                plan.count(), plan.firstWorker(), config.topics().input(), config.topics().output(), config.connection().instanceId(),
                null, config.registry().grace());
        registry.handOver(plan, view, plan.marks(resume, view), target, config.connection().instanceId());
        return describe(plan, true);
    }

    /**
     * What the target's start needs besides its application id: {@code " and id.worker-offset=N or auto"}
     * when the registry holds its workers for it, else empty.
     */
    String startSettings(HandOver plan) {
        boolean held = plan.kind() == HandOver.Kind.HAND_OVER || plan.kind() == HandOver.Kind.CLAIM || plan.kind() == HandOver.Kind.HELD;
        return registry != null && held ? " and id.worker-offset=" + plan.firstWorker() + " or auto" : "";
    }

    @Override
    public void close() {
        if (registry != null) {
            registry.close();
        }
    }
}
