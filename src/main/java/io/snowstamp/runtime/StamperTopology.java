package io.snowstamp.runtime;

import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.RecoverySettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseCodec;
import io.snowstamp.lease.LeaseVerifier;
import io.snowstamp.lease.Leases;
import io.snowstamp.resume.TailGuard;
import io.snowstamp.resume.TailPrefetch;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.sequence.SequenceTail;
import io.snowstamp.sequence.SequenceTailReader;
import io.snowstamp.sequence.SequenceTopology;
import io.snowstamp.ownership.EarlyLeases;
import io.snowstamp.stream.Names;
import io.snowstamp.ownership.PreCommitHooks;
import io.snowstamp.ownership.PredecessorFence;
import io.snowstamp.stream.StampTopology;
import io.snowstamp.stream.StamperStats;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.resume.TailProbe;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.apache.kafka.streams.Topology;

import java.util.Map;
import java.util.Properties;
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

    /**
     * {@code -Dsnowstamp.test.lease=off}: no lease (the behaviour before it existed), so a fault test can show what
     * the lease prevents. Never for production: a stamper cut off from its group coordinator then issues IDs another
     * instance issues too.
     */
    static final String LEASE_OFF_PROPERTY = "snowstamp.test.lease";

    private final Topology topology;
    private final TailPrefetch prefetch;
    private final LeaseVerifier leases;
    /** Takes the tasks' leases when their restores end (snowflake mode with the lease on), or null. */
    private final EarlyLeases early;
    private final TransactionFence fence;
    /** The source topic of the tasks that take leases, and the changelog that holds them (same partition numbers). */
    private final String leaseSource;
    private final String leaseChangelog;
    /** The acknowledgements of the tasks' state writes, which their write-ahead reservations wait for. */
    private final WriteAcks acks;
    private final AutoCloseable[] clients;

    private StamperTopology(Topology topology, TailPrefetch prefetch, LeaseVerifier leases, EarlyLeases early, TransactionFence fence,
                            String leaseSource, String leaseChangelog, WriteAcks acks,
                            AutoCloseable... clients) {
        this.topology = topology;
        this.acks = acks;
        this.prefetch = prefetch;
        this.leases = leases;
        this.early = early;
        this.fence = fence;
        this.leaseSource = leaseSource;
        this.leaseChangelog = leaseChangelog;
        this.clients = clients;
    }

    /** The lease verifier the tasks take their leases from, or null when the lease is off (test property). */
    static LeaseVerifier leaseVerifier(SnowstampConfig config) {
        if ("off".equals(System.getProperty(LEASE_OFF_PROPERTY))) {
            org.slf4j.LoggerFactory.getLogger(StamperTopology.class).warn("-D{}=off: tasks issue IDs without a lease (fault tests"
                    + " only: an instance cut off from its group coordinator may issue IDs another instance issues too)", LEASE_OFF_PROPERTY);
            return null;
        }
        ConnectionSettings connection = config.connection();
        String applicationId = connection.applicationId();
        Map<String, LeaseCodec> codecs = config.idMode() == SnowstampConfig.IdMode.SEQUENCE
                ? Map.of(SequenceNames.changelogTopic(applicationId), SequenceTopology.leaseCodec())
                : Map.of(Names.changelogTopic(applicationId), StampTopology.leaseCodec());
        return new LeaseVerifier(properties(OwnClient.LEASE_ADMIN, connection), properties(OwnClient.LEASE_READER, connection),
                properties(OwnClient.LEASE_WRITER, connection), codecs, applicationId + "-" + connection.instanceId());
    }

    /** The stamper's own clients beside Kafka Streams', each made from {@link #properties}. */
    enum OwnClient { LEASE_ADMIN, LEASE_READER, LEASE_WRITER, TAIL_READER, TRANSACTION_FENCE }

    /**
     * The settings of one of the stamper's own clients, with the request timeout Streams' clients get: they must find a
     * leader that moved away from a frozen broker as soon as the stamper does ({@link Tuning#REQUEST_TIMEOUT_MS}).
     * Package-private for TuningTest.
     */
    static Properties properties(OwnClient client, ConnectionSettings connection) {
        Properties props = switch (client) {
            case LEASE_READER -> KafkaSettings.consumer(connection);
            case LEASE_WRITER -> KafkaSettings.producer(connection);
            case LEASE_ADMIN, TAIL_READER, TRANSACTION_FENCE -> KafkaSettings.client(connection);
        };
        Tuning.requestTimeout(props, connection);
        return props;
    }

    /**
     * @param registryMarks    worker -> the worker registry's mark (-1: none), snowflake mode
     * @param outputPartitions the output topic's partitions, sequence mode
     */
    static StamperTopology build(SnowstampConfig config, LongSupplier clock, StamperStats stats, LongUnaryOperator registryMarks,
                                 int outputPartitions) {
        LeaseVerifier leases = leaseVerifier(config);
        return config.idMode() == SnowstampConfig.IdMode.SEQUENCE ? sequence(config, clock, stats, outputPartitions, leases)
                : snowflake(config, clock, stats, registryMarks, leases);
    }

    private static StamperTopology snowflake(SnowstampConfig config, LongSupplier clock, StamperStats stats,
                                             LongUnaryOperator registryMarks, LeaseVerifier leases) {
        Leases taken = leases == null ? Leases.none() : leases;
        ConnectionSettings connection = config.connection();
        RecoverySettings recovery = config.recovery();
        String output = config.topics().output();
        TailGuard tailGuard = recovery.tailGuard()
                ? new TailGuard(properties(OwnClient.TAIL_READER, connection), output, config.ids().layout(), recovery.tailGuardTimeout(),
                        StampTopology.skipsStampedInputs(config) ? config.topics().input() : null) : null;
        TransactionFence fence = fence(config);
        String changelog = Names.changelogTopic(connection.applicationId());
        EarlyLeases early = leases == null ? null : new EarlyLeases(leases, changelog, connection.instanceId(),
                config.ids().layout().fingerprint(), config.ids()::workerFor, clock);
        WriteAcks acks = acks(connection, changelog);
        if (tailGuard == null) {
            Topology topology = StampTopology.build(config, clock, TailProbe.disabled(), stats, registryMarks,
                    fence == null ? PredecessorFence.none() : fence, taken, early, acks);
            return new StamperTopology(topology, null, leases, early, fence, config.topics().input(),
                    changelog, acks, fence, leases);
        }
        // tasks that start together fence and read their tails in one go (see TailPrefetch for why that is as safe)
        TailPrefetch prefetch = new TailPrefetch(tailGuard, tailGuard::highestIssued,
                fence == null ? TailPrefetch.Fence.none() : fence::fenceOpenTransactions, config.ids()::workerFor,
                config.ids().datacenterId(), PREFETCH_MAX_AGE_NANOS, System::nanoTime);
        Topology topology = StampTopology.build(config, clock, prefetch, stats, registryMarks,
                fence == null ? PredecessorFence.none() : prefetch::fence, taken, early, acks);
        return new StamperTopology(topology, prefetch, leases, early, fence, config.topics().input(),
                changelog, acks, tailGuard, fence, leases);
    }

    private static StamperTopology sequence(SnowstampConfig config, LongSupplier clock, StamperStats stats, int outputPartitions,
                                            LeaseVerifier leases) {
        RecoverySettings recovery = config.recovery();
        SequenceTailReader tail = recovery.tailGuard()
                ? new SequenceTailReader(properties(OwnClient.TAIL_READER, config.connection()), config.topics().output(), recovery.tailGuardTimeout()) : null;
        String applicationId = config.connection().applicationId();
        WriteAcks acks = acks(config.connection(), SequenceNames.changelogTopic(applicationId));
        // exactly-once: the periodic checkpoint writes each tag's issued, a clean stop's last commit the exact one
        boolean exactlyOnce = config.connection().processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2;
        Topology topology = SequenceTopology.build(config, outputPartitions, clock, tail == null ? SequenceTail.disabled() : tail,
                leases == null ? Leases.none() : leases, acks, exactlyOnce ? stats.cleanStopHooks() : null);
        TransactionFence fence = fence(config);
        return new StamperTopology(topology, null, leases, null, fence, SequenceNames.repartitionTopic(applicationId),
                SequenceNames.changelogTopic(applicationId), acks, tail, fence, leases);
    }

    /**
     * The acknowledgements of the state writes to {@code changelog}, which the tasks' reservations wait for. Under
     * exactly-once a reservation is in the same transaction as the IDs or numbers it covers: both become visible or
     * neither, and a fenced owner commits nothing, so nothing waits for the write's acknowledgement (design.md).
     */
    private static WriteAcks acks(ConnectionSettings connection, String changelog) {
        return connection.processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2
                ? WriteAcks.immediate() : WriteAcks.of(changelog);
    }

    /** Exactly-once: fences a previous owner's open transactions (at restore start, and at task start in snowflake mode). */
    private static TransactionFence fence(SnowstampConfig config) {
        ConnectionSettings connection = config.connection();
        return connection.processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2
                ? new TransactionFence(properties(OwnClient.TRANSACTION_FENCE, connection), connection.applicationId(),
                config.topics().output(), config.recovery().tailGuardTimeout())
                : null;
    }

    /** Exactly-once: fences a dead owner's open transaction when a changelog's restore starts; null under at-least-once. */
    TransactionFence fence() {
        return fence;
    }

    /** Told of every restore's end offset (a task's lease checks what came after it); null when the lease is off. */
    LeaseVerifier leases() {
        return leases;
    }

    /** Takes the tasks' leases when their restores end; null in sequence mode or with the lease off. */
    EarlyLeases early() {
        return early;
    }

    Topology topology() {
        return topology;
    }

    /**
     * The clients Kafka Streams is to use: {@code configured}'s, with main consumers that start many tasks as one
     * batch of work and keep a task's input back while its lease waits out the previous owner ({@link StamperClients}),
     * and run {@code beforeEachPoll} on the stream thread before each of their polls.
     */
    KafkaClientSupplier clients(KafkaClientSupplier configured, StartStats stats, Runnable beforeEachPoll) {
        LeaseVerifier verifier = leases;
        return new StamperClients(configured, tp -> verifier != null && tp.topic().equals(leaseSource)
                && verifier.awaitingTakeover(new TopicPartition(leaseChangelog, tp.partition())), stats, acks, beforeEachPoll,
                fetched -> {
                    if (prefetch != null) {
                        prefetch.committedFetched(fetched.stream().filter(tp -> tp.topic().equals(leaseSource))
                                .map(TopicPartition::partition).toList());
                    }
                });
    }

    /** Whether the task of input partition {@code partition} here still waits out the previous owner's lease (false without a lease). */
    boolean awaitingTakeover(int partition) {
        LeaseVerifier verifier = leases;
        return verifier != null && verifier.awaitingTakeover(new TopicPartition(leaseChangelog, partition));
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
