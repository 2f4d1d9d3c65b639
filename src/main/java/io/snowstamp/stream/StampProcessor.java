package io.snowstamp.stream;

import io.snowstamp.ownership.Issuer;
import io.snowstamp.ownership.WriteAhead;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.ownership.TaskState;
import io.snowstamp.ownership.EarlyLeases;
import io.snowstamp.ownership.LeadWatch;
import io.snowstamp.ownership.HeartbeatSchedule;
import io.snowstamp.ownership.PredecessorFence;
import io.snowstamp.ownership.PreCommitHooks;
import io.snowstamp.ownership.LastIdWrite;

import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.IdSettings;
import io.snowstamp.config.IdSettings.OnExcessLead;
import io.snowstamp.config.RecoverySettings;
import io.snowstamp.config.StampSettings;
import io.snowstamp.id.IdGenerator;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.Leases;
import io.snowstamp.resume.ResumeDecision;
import io.snowstamp.resume.TailProbe;
import io.snowstamp.state.IdHeader;
import io.snowstamp.state.WorkerState;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * Stamps each record of one input partition with the next ID of that partition's generator.
 *
 * <p>{@link #init} runs after Kafka Streams has restored the stores from their changelogs (also after a crash wiped
 * local state). It takes the worker lease (the next epoch) — or adopts the one {@link EarlyLeases} took for it when the
 * restore ended — and resumes the generator above everything the restored state, the output partition's tail and the
 * clock say may have been issued ({@link ResumeDecision}). Per record: {@link Issuer} takes the ID under the lease and
 * the write-ahead reservations ({@link WriteAhead}: no ID above the last acknowledged reservation leaves), then the
 * value is spliced and the record forwarded. Right before every commit ({@link PreCommitStore}) the state also takes
 * the exact last ID issued, so after a clean stop the changelog says what was really issued. Every state written
 * carries the wall-clock time of its write ({@link WorkerState#writtenAt()}); no state is written once the lease is
 * lost or its term ran out.
 */
final class StampProcessor implements Processor<byte[], byte[], byte[], StampedValue> {
    private static final Logger log = LoggerFactory.getLogger(StampProcessor.class);

    private final IdSettings ids;
    private final StampSettings stamp;
    private final Duration takeoverGap;
    private final ConnectionSettings connection;
    private final LongSupplier clock;
    private final TailProbe tailProbe;
    /** worker -> mark of a released claim in the worker registry (-1: none): a lower bound of the resume point. */
    private final java.util.function.LongUnaryOperator registryMarks;
    private final PredecessorFence fence;
    private final WriteAcks acks;
    private final StamperStats stats;
    private final PreCommitHooks preCommitHooks;
    /** This task's last ID, written by {@link PreCommitHooks} right before the commits that need it. */
    private LastIdWrite lastIds;
    /** The ID in the value too (JSON member, schema-registry field), or null: header only. */
    private final ValueField values;
    /**
     * {@code stamp.header-format=compact}: 8-byte binary ID and offset under short names. The headers are most of what
     * stamping costs (Kafka's work per header: benchmarks.md, "Where the cost is"); fewer header bytes measured ~10%
     * less CPU per record in this process and in the broker, not more throughput.
     */
    private final boolean compact;
    private final long reservationUnits;
    private final long maxLeadMillis;
    private final SizeLimit sizeLimit;

    private ProcessorContext<byte[], StampedValue> context;
    /** The records set aside while the task's next ID would wait, and their way out. */
    private SetAside aside;
    /** {@code id.on-excess-lead=pause}: a lead over {@code id.max-lead} sets records aside too. */
    private final boolean pausesOnLead;
    /** When the first record now set aside for a wait started waiting (the lease's ticker; -1: none waits). */
    private long waitingSince = -1;
    /** What the wait since {@link #waitingSince} began for (null: a wait of no ID's, e.g. a lookup). */
    private Issuer.Wait waitingFor;
    private int partition;
    private IdGenerator generator;
    private WriteAhead ahead;
    private Issuer issuer;
    private ReservationRenewal renewal;
    private TaskState taskState;
    private long lastIssued = -1;
    private LeadWatch lead;
    private final HeartbeatSchedule heartbeats = new HeartbeatSchedule();
    private Cancellable leaseWrite;
    /** The input's provenance, written and read back. */
    private SourceHeaders sources;
    private TaskStats taskStats;
    private final Leases leases;
    /** Exactly-once with the tail guard: a start resumes above the committed output tail, not the state's bounds. */
    private final boolean tailDecides;
    /** Whether the state's reservations bound this task's resume (false where a complete output tail decides). */
    private boolean reservationBounds = true;
    /** At-least-once: a task start skips the inputs its predecessor already stamped ({@link StampedCheck}). */
    private final boolean skipsStamped;
    /** The check of what is already stamped (created at {@link #init}). */
    private StampedCheck stamped;
    /** The input topic: a check started at {@link #init} for records restored set aside reads its provenance. */
    private final String inputTopic;
    /** Where the task's lease may have been taken when its restore ended (null: none). */
    private final EarlyLeases earlyLeases;
    /** Before every ID: the task's lease on its partition is confirmed by the changelog (every mode). */
    private LeaseGuard lease = LeaseGuard.none();

    StampProcessor(IdSettings ids, StampSettings stamp, RecoverySettings recovery, ConnectionSettings connection, LongSupplier clock,
                   TailProbe tailProbe, StamperStats stats, PreCommitHooks preCommitHooks,
                   java.util.function.LongUnaryOperator registryMarks, PredecessorFence fence, Leases leases,
                   EarlyLeases earlyLeases, WriteAcks acks, ValueField values, String inputTopic) {
        this.inputTopic = inputTopic;
        this.registryMarks = registryMarks;
        this.acks = acks;
        this.leases = leases;
        this.earlyLeases = earlyLeases;
        this.fence = fence;
        this.ids = ids;
        this.stamp = stamp;
        this.takeoverGap = recovery.takeoverGap();
        this.connection = connection;
        this.stats = stats;
        this.preCommitHooks = preCommitHooks;
        this.clock = clock;
        this.tailProbe = tailProbe;
        this.values = values;
        this.compact = stamp.headerFormat() == StampSettings.HeaderFormat.COMPACT;
        this.skipsStamped = StampTopology.skipsStampedInputs(connection, stamp, recovery);
        this.sizeLimit = new SizeLimit(connection.maxRequestSize(), values == null ? 0 : values.maxGrowth());
        long unit = ids.layout().unitMillis();
        this.tailDecides = StampTopology.tailDecides(connection, recovery);
        // where the output tail decides a resume, a reservation keeps the changelog a high-water mark: written rarely
        this.reservationUnits = (ids.reservation().toMillis() + unit - 1) / unit * (tailDecides ? StampTopology.TAIL_DECIDES_RESERVATION_FACTOR : 1);
        this.maxLeadMillis = ids.maxLead().toMillis();
        this.pausesOnLead = ids.onExcessLead() == OnExcessLead.PAUSE;
    }

    @Override
    public void init(ProcessorContext<byte[], StampedValue> context) {
        // Streams may close() and init() the same instance: rebuild everything, ending what an earlier incarnation scheduled
        endScheduled();
        this.context = context;
        this.waitingSince = -1;
        this.partition = context.taskId().partition();
        this.lastIssued = -1;
        long worker = ids.checkedWorkerFor(partition);
        taskState = new TaskState(context.getStateStore(Names.STORE), partition, clock, acks);
        lastIds = new LastIdWrite(preCommitHooks, (interval, punctuator) -> context.schedule(interval, PunctuationType.WALL_CLOCK_TIME,
                punctuator), taskState, () -> lastIssued);
        WorkerState restored = taskState.restored(ids, worker);
        // the new lease first (or the one taken when the restore ended), straight to the changelog
        lease.release();
        EarlyLeases.TaskLease taken = EarlyLeases.start(earlyLeases, leases, context.taskId(),
                Names.changelogTopic(context.applicationId()), restored, holder(), clock, "partition " + partition + " worker " + worker);
        boolean takenEarly = taken.early();
        WorkerState state = taken.state();
        lease = taken.guard();
        taskState.leased(state, lease);     // commitLease asks for the commit that makes it durable at once
        // a dead previous owner's open transaction would hide this task's records until the broker aborts it
        fence.fenceOpenTransactions(partition);
        TailProbe.Result tail = tailProbe.highestIssued(partition, ids.datacenterId(), worker);
        long now = clock.getAsLong();
        // the tail decides only if it holds the newest IDs: empty or below lastId (output lost), the state's bounds do
        reservationBounds = !tailDecides || tail.highestId() < 0 || tail.highestId() < restored.lastId();
        ResumeDecision decision = ResumeDecision.decide(ids.layout(), ids.datacenterId(), worker, restored, tail,
                registryMarks.applyAsLong(worker), now, takeoverGap.toMillis(), reservationBounds);
        this.generator = new IdGenerator(ids.layout(), ids.datacenterId(), worker, clock);
        generator.resumeAbove(decision.resumeAbove());
        // the worker's highest ID in the output (its previous owner's): issued, so the state may name it — a partition
        // that moved while its owner ran and then stops cleanly here without a record names it after the stop
        if (tail.highestId() > restored.lastId()) {
            lastIssued = tail.highestId();
        }
        startIssuing(worker);
        taskStats = stats.open(partition, worker, now, clock);
        sources = new SourceHeaders(stamp.provenance(), compact, partition);
        PauseBuffer paused = new PauseBuffer(context.getStateStore(Names.PENDING_STORE));
        stamped = new StampedCheck(partition, inputTopic, tailProbe, paused, taskStats, tail.sources(), skipsStamped);
        aside = new SetAside(context, paused, sources, stamped, values, taskStats, partition, pausesOnLead, inputTopic, new SetAside.Stamping() {
            @Override
            public boolean leadExceeded() {
                return StampProcessor.this.leadExceeded();
            }

            @Override
            public boolean mustWait() {
                return StampProcessor.this.mustWait();
            }

            @Override
            public void waitEnded() {
                StampProcessor.this.waitEnded();
            }

            @Override
            public void firstHeld() {
                if (waitingSince < 0) {
                    lead.holdingBack(generator.leadMillis());
                }
            }

            @Override
            public void stamp(Record<byte[], byte[]> record, Object plan) {
                StampProcessor.this.stamp(record, plan, false);
            }
        });
        lead = new LeadWatch(partition, worker, maxLeadMillis, ids.layout().maxSequence() + 1, taskStats::excessLead, clock);
        LeaseGuard taskLease = lease;
        taskStats.leaseConfirmedBy(taskLease::readBack);
        taskStats.started(decision, state.epoch());
        // key-value pairs: fields of their own in JSON logs (SNOWSTAMP_LOG_FORMAT=json)
        log.atInfo().addKeyValue("event", "task-assigned").addKeyValue("partition", partition).addKeyValue("worker", worker)
                .addKeyValue("epoch", state.epoch()).addKeyValue("resumeSource", decision.source())
                .log("partition {} worker {}: lease epoch {} taken by {}{} (previous holder {}, last heartbeat {}); {}",
                partition, worker, state.epoch(), state.holder(), takenEarly ? " when its restore ended" : "",
                restored.holder().isEmpty() ? "none" : restored.holder(),
                restored.heartbeatAt() == 0 ? "never" : Instant.ofEpochMilli(restored.heartbeatAt()),
                decision.describe(ids.layout()));
        heartbeats.start(context, ids.heartbeat(), partition, () -> {
            taskState.heartbeat(lastIssued);
            lastIds.cover();
        });
        // under exactly-once the put in init waits in the thread's open transaction for a commit, which only a record or
        // a punctuation triggers: this one-shot punctuation asks for one, so the lease in the store is durable at once
        leaseWrite = context.schedule(Duration.ofMillis(1), PunctuationType.WALL_CLOCK_TIME, ignored -> commitLease());
        if (lastIssued > state.lastId()) {
            lastIds.issued();
        }
        aside.restored(skipsStamped);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        if (stamped.active() && stamped.stampedBefore(context.recordMetadata().orElseThrow().offset(), record)) {
            return;
        }
        sizeLimit.check(record);
        Object plan = values == null ? null : values.inspectNow(record.value());
        if (plan == ValueField.LOOKUP) {
            aside.lookUp(record.value());
        }
        // behind records set aside, while a read of what is already stamped or a schema lookup runs, or when this one's ID
        // would wait: set aside, so the thread stamps the other tasks
        if (!aside.isEmpty() || plan == ValueField.LOOKUP || stamped.reading() || (pausesOnLead && leadExceeded())
                || mustWait()) {
            aside.hold(record);
            return;
        }
        stamp(record, plan, true);
    }

    /** Whether the task's next ID would wait now ({@link Issuer#mustWait}); starts the wait's clock. */
    private boolean mustWait() {
        Issuer.Wait wait = issuer.mustWait(waitingSince);
        if (wait == Issuer.Wait.NONE) {
            return false;
        }
        if (waitingSince < 0) {
            waitingSince = lease.ticker().nanoTime();
            waitingFor = wait;
            taskStats.waitStarted();
        }
        return true;
    }

    /** The task's next ID no longer waits: the wait is counted (metrics) and over. */
    private void waitEnded() {
        if (waitingSince >= 0 && waitingFor != null) {
            long nanos = lease.ticker().nanoTime() - waitingSince;
            if (waitingFor == Issuer.Wait.LEASE) {
                stats.leaseWaited(nanos);
            } else {
                stats.reservationWaited(nanos);
            }
        }
        waitingSince = -1;
        waitingFor = null;
        taskStats.waitEnded();
    }

    /**
     * The story of one record: the ID ({@link Issuer}: lease, generator, acknowledged reservation, lease again), the
     * value spliced, the headers added, forwarded.
     *
     * @param addSource add the provenance header (held-back records already carry it)
     */
    private void stamp(Record<byte[], byte[]> record, Object plan, boolean addSource) {
        long id = issuer.issue();
        lastIssued = id;
        lastIds.issued();
        taskStats.issued(id, ids.layout().toWallMillis(generator.lastTime()), generator.clockBehindEvents(),
                generator.borrowedUnits());
        // the digits only where they are written: the header in the text format (a JSON value makes its own otherwise)
        byte[] digits = compact ? null : IdHeader.ascii(id);
        byte[] value = plan == null ? record.value() : values.write(record.value(), plan, id, digits);
        // withValue copies the headers: the headers are added to the copy, so the input's (usually none) are
        // copied, not ours too (one list copy per record fewer; profiled, see benchmarks.md)
        Record<byte[], StampedValue> stamped = record.withValue(new StampedValue(partition, value));
        if (addSource) {
            sources.add(stamped.headers(), context.recordMetadata().orElseThrow());
        }
        if (compact) {
            stamped.headers().add(IdHeader.COMPACT_ID, IdHeader.binary(id));
        } else {
            stamped.headers().add(IdHeader.ID, digits);
        }
        context.forward(stamped);
        if (!pausesOnLead) {
            lead.issued(generator.leadMillis(), lastIssued);
        }
    }

    /**
     * The task's issuing: write-ahead reservations (renewed ahead of need while the task is active, from the moment its
     * lease record was read back: during the takeover wait, so that the first ID does not wait) and the {@link Issuer}.
     */
    private void startIssuing(long worker) {
        String name = "partition " + partition + " worker " + worker;
        ahead = new WriteAhead(ids.layout(), ids.datacenterId(), worker, reservationUnits, partition, lease, until -> taskState.reserve(until,
                lastIssued), name, () -> taskStats.waitStarted(), nanos -> { stats.reservationWaited(nanos); taskStats.waitEnded(); });
        taskState.issuing(ahead);
        issuer = new Issuer(lease, generator, ahead, FreezeHook.steps(name), reservationBounds);
        renewal = new ReservationRenewal(ids, reservationUnits, acks.isImmediate());
        renewal.start(context, () -> lastIssued, () -> lease.readBack(), this::renew);
    }

    private void renew() {
        ahead.renew(Math.max(generator.lastTime(), ids.layout().unitsSinceEpoch(clock.getAsLong())));
    }

    private void commitLease() {
        leaseWrite.cancel();
        leaseWrite = null;
        context.commit();
        // a task start follows a rebalance, which may have closed the task that held the thread's stop check
        lastIds.cover();
    }

    private boolean leadExceeded() {
        return lead.exceeded(generator.leadMillis());
    }

    private String holder() {
        return EarlyLeases.holder(connection.instanceId());
    }

    /** Cancels what this incarnation scheduled and the read it runs beside the thread. */
    private void endScheduled() {
        if (renewal != null) {
            renewal.cancel();
            renewal = null;
        }
        if (leaseWrite != null) {
            leaseWrite.cancel();
            leaseWrite = null;
        }
        if (aside != null) {
            aside.close();
        }
        if (stamped != null) {
            stamped.cancel();
        }
    }

    @Override
    public void close() {
        try {
            if (lastIds != null) {
                lastIds.close();
            }
            lease.release();
            lease = LeaseGuard.none();
            heartbeats.cancel();
            if (taskState != null) {
                taskState.close();
            }
        } finally {
            endScheduled();
        }
        if (taskStats != null) {
            stats.close(taskStats);
        }
        if (generator != null) {
            log.atInfo().addKeyValue("event", "task-closed").addKeyValue("partition", partition)
                    .addKeyValue("worker", generator.workerId()).addKeyValue("epoch", taskState.state().epoch())
                    .log("partition {} worker {}: task closed after lease epoch {}; last ID issued {}", partition,
                            generator.workerId(), taskState.state().epoch(), lastIssued < 0 ? "none" : lastIssued);
        }
    }
}
