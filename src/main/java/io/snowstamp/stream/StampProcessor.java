package io.snowstamp.stream;

import io.snowstamp.config.ConfigException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.IdSettings;
import io.snowstamp.config.IdSettings.OnExcessLead;
import io.snowstamp.config.Keys;
import io.snowstamp.config.RecoverySettings;
import io.snowstamp.config.StampSettings;
import io.snowstamp.id.IdGenerator;
import io.snowstamp.id.IdLayout;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.Leases;
import io.snowstamp.resume.ResumeDecision;
import io.snowstamp.resume.StampedInputs;
import io.snowstamp.resume.TailProbe;
import io.snowstamp.state.IdHeader;
import io.snowstamp.state.WorkerState;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
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
    private static final int DRAIN_BATCH = 10_000;
    /** How often a task with records set aside tries to stamp them: a wait's end delays them by at most this. */
    private static final Duration DRAIN_EVERY = Duration.ofMillis(10);
    /**
     * Without provenance: the input offset of a record set aside, for a dead-letter record of it on its way out; removed
     * there (never forwarded). Eight bytes, big-endian.
     */
    private static final String ASIDE_OFFSET = "snowstamp-aside-offset";
    /** Where a task's read of its output further back than its start's tail read runs: beside the stream threads. */
    private static final java.util.concurrent.Executor OUTPUT_READS = java.util.concurrent.Executors.newCachedThreadPool(run -> {
        Thread thread = new Thread(run, "snowstamp-output-read");
        thread.setDaemon(true);
        return thread;
    });

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
    /** This task's last ID, waiting in {@link PreCommitHooks} to be written. */
    private final PreCommitHooks.Hook lastIdHook = new PreCommitHooks.Hook() {
        @Override
        public void write() {
            recordLastId();
        }

        @Override
        public boolean settled() {
            if (closed || lastIssued <= taskState.state().lastId()) {
                lastIdPending = false;
                return true;
            }
            return false;
        }
    };
    /** Wall-clock punctuations of this task, for the thread's {@link PreCommitHooks} sentinel. */
    private PreCommitHooks.Scheduler punctuations;
    /** The ID in the value too (JSON member, schema-registry field), or null: header only. */
    private final ValueField values;
    /**
     * {@code stamp.header-format=compact}: 8-byte binary ID and offset under short names. The headers are most of what
     * stamping costs (Kafka's work per header: benchmarks.md, "Where the cost is"); fewer header bytes measured ~10%
     * less CPU per record in this process and in the broker, not more throughput.
     */
    private final boolean compact;
    private final long reservationUnits;
    /** How often a task renews its reservation ahead of need (0: never, {@code id.reservation=0}). */
    private final Duration renewEvery;
    /**
     * A task that issued nothing for this long stops renewing (its next ID waits for one write): twice the reservation, at
     * least 30 s, so that a sparse input never waits, and an idle partition writes nothing after it. Many idle partitions
     * that all get a record at once wait one write each, one after another on the stream thread.
     */
    private final long idleNanos;
    private final long maxLeadMillis;
    private final SizeLimit sizeLimit;

    private ProcessorContext<byte[], StampedValue> context;
    /**
     * The records set aside, in input order: while the task's next ID would wait (a takeover, a lease confirmation, a
     * reservation not yet read back) or its lead is exceeded under {@code id.on-excess-lead=pause}. Logged with the input
     * offsets, so a crash loses none; the task's thread meanwhile stamps its other tasks.
     */
    private PauseBuffer paused;
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
    private Cancellable renewal;
    /** When the task last issued an ID, or started ({@link System#nanoTime()}): an idle task stops renewing. */
    private long activeAt;
    /** {@link #lastIssued} at the last renewal tick (the record path does not read the clock for this). */
    private long seenIssued;
    private TaskState taskState;
    private long lastIssued = -1;
    /** The task's {@link #lastIdHook} waits in {@link PreCommitHooks} to be written. */
    private boolean lastIdPending;
    private boolean closed;
    private LeadWatch lead;
    private final HeartbeatSchedule heartbeats = new HeartbeatSchedule();
    private Cancellable leaseWrite;
    private String sourceTopic;
    private int sourcePartition = -1;
    private byte[] sourcePrefix;
    private Cancellable drain;
    private TaskStats taskStats;
    private final Leases leases;
    /** Exactly-once with the tail guard: a start resumes above the committed output tail, not the state's bounds. */
    private final boolean tailDecides;
    /** Whether the state's reservations bound this task's resume (false where a complete output tail decides). */
    private boolean reservationBounds = true;
    /** At-least-once: a task start skips the inputs its predecessor already stamped ({@link StampedInputs}). */
    private final boolean skipsStamped;
    /** The provenance the start's tail read saw (null: none). */
    private StampedInputs.Window tailSources;
    /** The inputs already stamped from the task's first input on (null: not known yet, or nothing left to skip). */
    private StampedInputs alreadyStamped;
    /** Whether the task's first input is still to come: it names the committed offset the skip starts at. */
    private boolean firstInput;
    /**
     * The read of the inputs already stamped further back than the start's tail read reached (null: none under way). It
     * runs beside the stream thread; the task's records wait set aside meanwhile and are checked when it is done.
     */
    private java.util.concurrent.CompletableFuture<StampedInputs> stampedRead;
    /** The first record numbers in {@link #paused} set aside before the read above was done: checked on the way out. */
    private long uncheckedFrom = -1;
    private long uncheckedTo = -1;
    /** The input offset the check of what is already stamped starts at (-1: none started). */
    private long stampedFrom = -1;
    /** The input topic: a check started at {@link #init} for records restored set aside reads its provenance. */
    private final String inputTopic;
    /** The input topic of the records set aside (the dead-letter record of one refused on its way out names it). */
    private String asideTopic;
    /** The lookup of a schema the task's next record set aside needs (null: none under way); beside the stream thread. */
    private java.util.concurrent.CompletableFuture<Void> lookup;
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
        // renewals keep a busy task ahead of the acknowledgements it waits for; where writes count as made (exactly-once,
        // the test driver) the reservation written at a crossing is enough
        this.renewEvery = reservationUnits == 0 || acks.isImmediate() ? Duration.ZERO
                : Duration.ofMillis(Math.max(10, reservationUnits * unit / 4));
        this.idleNanos = Math.max(java.util.concurrent.TimeUnit.SECONDS.toNanos(30), ids.reservation().multipliedBy(2).toNanos());
        this.maxLeadMillis = ids.maxLead().toMillis();
        this.pausesOnLead = ids.onExcessLead() == OnExcessLead.PAUSE;
    }

    @Override
    public void init(ProcessorContext<byte[], StampedValue> context) {
        // Streams may close() and init() the same instance after restoring: rebuild everything here
        this.context = context;
        this.punctuations = (interval, punctuator) -> context.schedule(interval, PunctuationType.WALL_CLOCK_TIME, punctuator);
        this.paused = new PauseBuffer(context.getStateStore(Names.PENDING_STORE));
        this.waitingSince = -1;
        this.drain = null;
        this.partition = context.taskId().partition();
        this.lastIssued = -1;
        this.lastIdPending = false;
        this.closed = false;
        long worker = workerForPartition();
        taskState = new TaskState(context.getStateStore(Names.STORE), partition, clock, acks);
        WorkerState restored = taskState.restored(ids, worker);
        // the new lease first, straight to the changelog: the previous owner reads it there and stops, and the
        // first ID here waits until its last term has run out (LeaseVerifier)
        lease.release();
        EarlyLeases.Taken early = earlyLeases == null ? null : earlyLeases.adopt(partition, restored, holder());
        boolean takenEarly = early != null;
        WorkerState state;
        if (takenEarly) {
            // taken when the restore ended, from this very state (EarlyLeases): its wait has been running since
            state = early.state();
            lease = early.guard();
        } else {
            long highestEpoch = earlyLeases == null ? -1 : earlyLeases.highestEpoch(partition);
            state = restored.withNewLease(holder(), clock.getAsLong(), highestEpoch).withWrittenAt(clock.getAsLong());
            lease = EarlyLeases.take(leases, context.taskId(), Names.changelogTopic(context.applicationId()), partition, state,
                    "partition " + partition + " worker " + worker);
        }
        taskState.leased(state, lease);     // commitLease asks for the commit that makes it durable at once
        // a dead previous owner's open transaction would hide this task's records until the broker aborts it
        fence.fenceOpenTransactions(partition);
        TailProbe.Result tail = tailProbe.highestIssued(partition, ids.datacenterId(), worker);
        this.tailSources = tail.sources();
        this.alreadyStamped = null;
        this.firstInput = skipsStamped;
        this.stampedRead = null;
        this.uncheckedFrom = -1;
        this.uncheckedTo = -1;
        this.stampedFrom = -1;
        this.lookup = null;
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
        lead = new LeadWatch(partition, worker, maxLeadMillis, ids.layout().maxSequence() + 1, taskStats, clock);
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
            preCommitHooks.cover(lastIdHook, punctuations);
        });
        // under exactly-once the put in init waits in the thread's open transaction for a commit, which only a record or
        // a punctuation triggers: this one-shot punctuation asks for one, so the lease in the store is durable at once
        leaseWrite = context.schedule(Duration.ofMillis(1), PunctuationType.WALL_CLOCK_TIME, ignored -> commitLease());
        if (lastIssued > state.lastId()) {
            lastIdPending = true;
            preCommitHooks.pending(lastIdHook, punctuations);
        }
        if (!paused.isEmpty()) {
            log.info("partition {}: {} records set aside before the restart wait to be stamped", partition, paused.size());
            long oldest = sourceOffset(paused.peek());
            if (skipsStamped && oldest >= 0) {
                // the previous owner may have stamped some of them and stopped before a commit removed them from the store:
                // they are checked against the output as the first inputs are, from the oldest on, before the drain stamps
                checkStampedFrom(oldest);
            }
            scheduleDrain();
        }
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        if (firstInput || alreadyStamped != null) {
            if (stampedBefore(context.recordMetadata().orElseThrow().offset())) {
                return;
            }
        }
        sizeLimit.check(record);
        Object plan = values == null ? null : values.inspectNow(record.value());
        if (plan == ValueField.LOOKUP && lookup == null && paused.isEmpty()) {
            lookup = values.lookup(record.value());
        }
        // behind records set aside, while a read of what is already stamped or a schema lookup runs, or when this one's ID
        // would wait: set aside, so the thread stamps the other tasks
        if (!paused.isEmpty() || plan == ValueField.LOOKUP || stampedRead != null || (pausesOnLead && leadExceeded())
                || mustWait()) {
            holdBack(record);
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
     * At-least-once: whether the input at {@code offset} already has a record in the output, stamped by the previous
     * owner before it died or moved without committing its input offset; then it is not stamped again (nothing issued,
     * nothing forwarded: the output holds each input once). The task's first input is its committed offset: the inputs
     * already stamped from there on are read once, from the output tail the start read (or further back); where records
     * were restored set aside, from the oldest of them on, at {@link #init}. If the output cannot be read, every input is
     * stamped (copies, never a loss).
     */
    private boolean stampedBefore(long offset) {
        if (firstInput) {
            firstInput = false;
            if (stampedFrom < 0 || offset < stampedFrom) {
                // (a check started for records restored set aside covers every input from the oldest of them on)
                checkStampedFrom(offset);
            }
            tailSources = null;
            if (stampedRead != null) {
                return false;       // set aside, checked on its way out
            }
        }
        return foundStamped(offset);
    }

    /** Whether the check found input {@code offset} in the output (then counted as skipped). */
    private boolean foundStamped(long offset) {
        if (alreadyStamped == null) {
            return false;
        }
        if (alreadyStamped.contains(offset)) {
            taskStats.skippedStamped();
            return true;
        }
        if (offset >= alreadyStamped.highest() && paused.headSequence() >= uncheckedTo) {
            // past every input found, and no record set aside before the check was done waits to be checked: nothing
            // left to skip (a record arriving past them while they wait would otherwise let them out unchecked)
            alreadyStamped = null;
        }
        return false;
    }

    /**
     * Starts the check of the inputs from {@code from} on: from the start's tail read if it reaches back far enough, else
     * by a read further back beside the stream thread. Every record set aside now is checked on its way out.
     */
    private void checkStampedFrom(long from) {
        stampedFrom = from;
        uncheckedFrom = paused.headSequence();
        if (stampedRead != null) {
            stampedRead.cancel(false);
            stampedRead = null;
        }
        StampedInputs known = StampedInputs.of(tailSources, from, start -> null);
        if (known == null) {
            // the start's tail read did not reach back to the offset: read further back beside the thread
            alreadyStamped = null;
            stampedRead = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> tailProbe.stampedInputs(partition, inputTopic, from), OUTPUT_READS);
            return;
        }
        uncheckedTo = paused.nextSequence();
        alreadyStamped = reportStamped(known, from);
    }

    /** The read of the inputs already stamped is done (stream thread): what it found, or null (nothing, or it failed). */
    private StampedInputs settleStampedRead() {
        java.util.concurrent.CompletableFuture<StampedInputs> read = stampedRead;
        stampedRead = null;
        uncheckedTo = paused.nextSequence();
        try {
            return reportStamped(read.join(), stampedFrom);
        } catch (RuntimeException e) {
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
            log.warn("partition {}: cannot read which inputs from offset {} on are already stamped ({}); stamping them all"
                    + " (copies of inputs already in the output are possible, nothing is lost)", partition, stampedFrom, cause.getMessage());
            return null;
        }
    }

    /** Logs what the start found already stamped; null when nothing. */
    private StampedInputs reportStamped(StampedInputs found, long from) {
        if (found.count() == 0) {
            return null;
        }
        log.atInfo().addKeyValue("event", "inputs-already-stamped").addKeyValue("partition", partition)
                .addKeyValue("skipped", found.count())
                .log("partition {}: {} inputs from offset {} on (up to {}) were stamped by the previous owner before"
                        + " their offsets were committed: not stamped again{}", partition, found.count(), from,
                        found.highest(), found.complete() ? "" : " (the output read stopped before reaching offset " + from
                                + ": older copies may remain)");
        return found;
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
        if (!lastIdPending) {
            lastIdPending = true;
            preCommitHooks.pending(lastIdHook, punctuations);
        }
        taskStats.issued(id, ids.layout().toWallMillis(generator.lastTime()), generator.clockBehindEvents(),
                generator.borrowedUnits());
        // the digits only where they are written: the header in the text format (a JSON value makes its own otherwise)
        byte[] digits = compact ? null : IdHeader.ascii(id);
        byte[] value = plan == null ? record.value() : values.write(record.value(), plan, id, digits);
        // withValue copies the headers: the headers are added to the copy, so the input's (usually none) are
        // copied, not ours too (one list copy per record fewer; profiled, see benchmarks.md)
        Record<byte[], StampedValue> stamped = record.withValue(new StampedValue(partition, value));
        if (addSource) {
            addSourceHeader(stamped.headers());
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
        ahead = new WriteAhead(ids.layout(), ids.datacenterId(), worker, reservationUnits, partition, lease,
                until -> taskState.reserve(until, lastIssued), name, stats::reservationWaited);
        taskState.issuing(ahead);
        issuer = new Issuer(lease, generator, ahead, FreezeHook.steps(name), reservationBounds);
        activeAt = System.nanoTime();
        seenIssued = lastIssued;
        if (!renewEvery.isZero()) {
            renewal = context.schedule(renewEvery, PunctuationType.WALL_CLOCK_TIME, ignored -> renewIfActive());
        }
    }

    /** A task that issued within {@link #idleNanos} keeps a reservation ahead of its clock: its next ID does not wait. */
    private void renewIfActive() {
        long now = System.nanoTime();
        if (lastIssued != seenIssued) {
            seenIssued = lastIssued;
            activeAt = now;
        }
        // not before the lease's own record is in the log (read back once): a reservation sent by this producer could land
        // before the lease record the lease's producer sent, which would then be the newest value, with less reserved
        if (now - activeAt < idleNanos && lease.readBack()) {
            renew();
        }
    }

    private void renew() {
        ahead.renew(Math.max(generator.lastTime(), ids.layout().unitsSinceEpoch(clock.getAsLong())));
    }

    private void commitLease() {
        leaseWrite.cancel();
        leaseWrite = null;
        context.commit();
        // a task start follows a rebalance, which may have closed the task that held the thread's stop check
        preCommitHooks.cover(lastIdHook, punctuations);
    }

    /**
     * The committed state names the last ID issued: run right before each commit that follows an ID issued here (with the
     * other tasks of the thread), or only at a clean stop where commits need no exact last ID ({@link PreCommitHooks}).
     * An idle task adds nothing to the changelog; a closed one writes nothing.
     */
    private void recordLastId() {
        lastIdPending = false;
        if (!closed) {
            taskState.recordLastId(lastIssued);
        }
    }

    private boolean leadExceeded() {
        return lead.exceeded(generator.leadMillis());
    }

    /** Keeps the record, with its provenance, until its ID no longer waits (and, policy {@code pause}, the clock caught up). */
    private void holdBack(Record<byte[], byte[]> record) {
        if (paused.isEmpty()) {
            if (waitingSince < 0) {
                lead.holdingBack(generator.leadMillis());
            }
            scheduleDrain();
        }
        if (asideTopic == null) {
            asideTopic = context.recordMetadata().map(RecordMetadata::topic).orElse(null);
        }
        addSourceHeader(record.headers());
        if (!stamp.provenance()) {
            record.headers().add(ASIDE_OFFSET, IdHeader.binary(context.recordMetadata().orElseThrow().offset()));
        }
        paused.append(record);
        taskStats.heldBack(paused.size());
    }

    private void scheduleDrain() {
        if (drain == null) {
            drain = context.schedule(DRAIN_EVERY, PunctuationType.WALL_CLOCK_TIME, ignored -> drainPaused());
        }
    }

    /** Stamps the records set aside in order while their IDs need not wait and the lead allows, a bounded batch per call. */
    private void drainPaused() {
        int drained = 0;
        boolean leadHeld = false;
        while (!paused.isEmpty() && drained < DRAIN_BATCH) {
            if (stampedRead != null) {
                if (!stampedRead.isDone()) {
                    break;
                }
                alreadyStamped = settleStampedRead();
            }
            if (alreadyStamped != null && paused.headSequence() >= uncheckedFrom && paused.headSequence() < uncheckedTo
                    && foundStamped(sourceOffset(paused.peek()))) {
                paused.removeHead();        // set aside before the read was done: found in the output, not stamped again
                continue;
            }
            if (lookup != null) {
                if (!lookup.isDone()) {
                    break;
                }
                java.util.concurrent.CompletableFuture<Void> done = lookup;
                lookup = null;
                rethrowFailure(done);
            }
            if (pausesOnLead && leadExceeded()) {
                leadHeld = true;
                break;
            }
            if (mustWait()) {
                break;
            }
            Record<byte[], byte[]> record = paused.peek();
            long offset = sourceOffset(record);
            record.headers().remove(ASIDE_OFFSET);
            Object plan = null;
            if (values != null) {
                try {
                    plan = values.inspectNow(record.value());
                } catch (io.snowstamp.BadRecordException refused) {
                    paused.removeHead();
                    taskStats.heldBack(paused.size());
                    waitEnded();        // its ID no longer waited
                    throw new SetAsideRefused(refused, record, asideTopic, partition, offset);
                }
                if (plan == ValueField.LOOKUP) {
                    lookup = values.lookup(record.value());
                    break;
                }
            }
            stamp(record, plan, false);
            paused.removeHead();
            drained++;
        }
        if (drained > 0 && !leadHeld) {
            waitEnded();      // a wait that begins again later is a new one
        }
        taskStats.heldBack(paused.size());
        if (paused.isEmpty()) {
            drain.cancel();
            drain = null;
            if (drained > 0 && pausesOnLead) {
                log.info("partition {}: the clock caught up; stamping resumed", partition);
            }
        }
    }

    /**
     * A lookup that failed otherwise than by a refusal or an outage (credentials refused meanwhile, a bug) fails the task
     * as the same failure on the record's arrival would, its records still set aside; not looked up again and again.
     */
    private static void rethrowFailure(java.util.concurrent.CompletableFuture<Void> lookup) {
        try {
            lookup.join();
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /** The input offset a record set aside carries in its provenance header, or without provenance its own (-1: none). */
    private long sourceOffset(Record<byte[], byte[]> record) {
        org.apache.kafka.common.header.Header aside = record.headers().lastHeader(ASIDE_OFFSET);
        if (aside != null) {
            return IdHeader.parseBinary(aside.value());
        }
        String source = IdHeader.sourceText(record.headers(), "", partition);
        return source == null ? -1 : Long.parseLong(source.substring(source.lastIndexOf('/') + 1));
    }



    private void addSourceHeader(Headers headers) {
        if (stamp.provenance()) {
            RecordMetadata source = context.recordMetadata().orElseThrow();
            if (compact) {
                headers.add(IdHeader.COMPACT_SOURCE, IdHeader.binary(source.offset()));    // topic and partition are implied
                return;
            }
            // "topic/partition/" is the same for every record of the task: encode it once
            if (!source.topic().equals(sourceTopic) || source.partition() != sourcePartition) {
                sourceTopic = source.topic();
                sourcePartition = source.partition();
                sourcePrefix = (sourceTopic + "/" + sourcePartition + "/").getBytes(StandardCharsets.UTF_8);
            }
            headers.add(IdHeader.SOURCE, IdHeader.ascii(sourcePrefix, source.offset()));
        }
    }

    private long workerForPartition() {
        long worker = ids.workerFor(partition);
        IdLayout layout = ids.layout();
        if (worker > layout.maxWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, ids.workerOffset(),
                    "a value that leaves room for partition " + partition + ": worker = offset + partition must be <= "
                            + layout.maxWorker() + " with " + layout.workerBits() + " worker bits");
        }
        return worker;
    }

    private String holder() {
        return EarlyLeases.holder(connection.instanceId());
    }

    @Override
    public void close() {
        closed = true;
        preCommitHooks.closed(lastIdHook);
        lastIdPending = false;
        lease.release();
        lease = LeaseGuard.none();
        heartbeats.cancel();
        if (taskState != null) {
            taskState.close();
        }
        if (renewal != null) {
            renewal.cancel();
            renewal = null;
        }
        if (leaseWrite != null) {
            leaseWrite.cancel();
            leaseWrite = null;
        }
        if (drain != null) {
            drain.cancel();
            drain = null;
        }
        if (stampedRead != null) {
            stampedRead.cancel(false);      // its records stay set aside in the store: the next owner checks them again
            stampedRead = null;
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
