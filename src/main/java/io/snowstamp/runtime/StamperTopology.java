package io.snowstamp.runtime;

import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.RecoverySettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.resume.TailGuard;
import io.snowstamp.resume.TailPrefetch;
import io.snowstamp.sequence.SequenceTail;
import io.snowstamp.sequence.SequenceTailReader;
import io.snowstamp.sequence.SequenceTopology;
import io.snowstamp.stream.PredecessorFence;
import io.snowstamp.stream.StampTopology;
import io.snowstamp.stream.StamperStats;
import io.snowstamp.resume.TailProbe;
import org.apache.kafka.streams.Topology;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

/**
 * The stamper's topology for the configured mode, with the Kafka clients its tasks use at start
 * (the tail guard, the transaction fence, the sequence tail reader). Those clients live as long as
 * Kafka Streams runs: {@link #close} after Kafka Streams has stopped.
 */
final class StamperTopology implements AutoCloseable {
    /**
     * A tail read in a batch and not taken within this is read again at the task's start: the tasks of
     * one batch start within seconds of it; one that waits longer is not starting "now" any more.
     */
    private static final long PREFETCH_MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(2);

    private final Topology topology;
    private final TailPrefetch prefetch;
    private final AutoCloseable[] clients;

    private StamperTopology(Topology topology, TailPrefetch prefetch, AutoCloseable... clients) {
        this.topology = topology;
        this.prefetch = prefetch;
        this.clients = clients;
    }

    /**
     * @param registryMarks    worker -> the worker registry's mark (-1: none), snowflake mode
     * @param outputPartitions the output topic's partitions, sequence mode
     */
    static StamperTopology build(SnowstampConfig config, LongSupplier clock, StamperStats stats, LongUnaryOperator registryMarks,
                                 int outputPartitions) {
        return config.idMode() == SnowstampConfig.IdMode.SEQUENCE ? sequence(config, clock, outputPartitions)
                : snowflake(config, clock, stats, registryMarks);
    }

    private static StamperTopology snowflake(SnowstampConfig config, LongSupplier clock, StamperStats stats,
                                             LongUnaryOperator registryMarks) {
        ConnectionSettings connection = config.connection();
        RecoverySettings recovery = config.recovery();
        String output = config.topics().output();
        TailGuard tailGuard = recovery.tailGuard()
                ? new TailGuard(KafkaSettings.client(connection), output, config.ids().layout(), recovery.tailGuardTimeout()) : null;
        TransactionFence fence = connection.processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2
                ? new TransactionFence(KafkaSettings.client(connection), connection.applicationId(), output, recovery.tailGuardTimeout())
                : null;
        if (tailGuard == null) {
            Topology topology = StampTopology.build(config, clock, TailProbe.disabled(), stats, registryMarks,
                    fence == null ? PredecessorFence.none() : fence);
            return new StamperTopology(topology, null, fence);
        }
        // tasks that start together fence and read their tails in one go (see TailPrefetch for why that is as safe)
        TailPrefetch prefetch = new TailPrefetch(tailGuard, tailGuard::highestIssued,
                fence == null ? TailPrefetch.Fence.none() : fence::fenceOpenTransactions, config.ids()::workerFor,
                config.ids().datacenterId(), PREFETCH_MAX_AGE_NANOS, System::nanoTime);
        Topology topology = StampTopology.build(config, clock, prefetch, stats, registryMarks,
                fence == null ? PredecessorFence.none() : prefetch::fence);
        return new StamperTopology(topology, prefetch, tailGuard, fence);
    }

    private static StamperTopology sequence(SnowstampConfig config, LongSupplier clock, int outputPartitions) {
        RecoverySettings recovery = config.recovery();
        SequenceTailReader tail = recovery.tailGuard()
                ? new SequenceTailReader(KafkaSettings.client(config.connection()), config.topics().output(), recovery.tailGuardTimeout()) : null;
        Topology topology = SequenceTopology.build(config, outputPartitions, clock, tail == null ? SequenceTail.disabled() : tail);
        return new StamperTopology(topology, null, tail);
    }

    Topology topology() {
        return topology;
    }

    /** The task-start reads in batches, fed by the restore listener and the instance's state; null without a tail guard. */
    TailPrefetch prefetch() {
        return prefetch;
    }

    @Override
    public void close() {
        for (AutoCloseable client : clients) {
            if (client != null) {
                try {
                    client.close();
                } catch (Exception e) {
                    org.slf4j.LoggerFactory.getLogger(StamperTopology.class).debug("closing {} failed", client, e);
                }
            }
        }
    }
}
