package io.snowstamp.stream;

import io.snowstamp.ownership.PreCommitHooks;

import io.snowstamp.BadRecordException;
import io.snowstamp.resume.ResumeDecision;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@link TaskStats} of the tasks this instance runs now, plus instance-wide counters. Tasks
 * come and go (restarts, rebalances); {@link #totals()} keeps counting across them, so metrics
 * built on it only ever increase.
 */
public final class StamperStats {
    private final Map<Integer, TaskStats> tasks = new ConcurrentHashMap<>();
    /** What closed tasks did, by partition; guarded by this. */
    private final Map<Integer, Totals> retired = new HashMap<>();
    /** How closed tasks resumed, by {@link ResumeDecision#source()}; guarded by this. */
    private final Map<String, Long> retiredResumes = new HashMap<>();
    private final AtomicLong deadLetters = new AtomicLong();
    private final Map<BadRecordException.Code, AtomicLong> deadLettersByReason = new java.util.EnumMap<>(BadRecordException.Code.class);

    {
        for (BadRecordException.Code code : BadRecordException.Code.values()) {
            deadLettersByReason.put(code, new AtomicLong());
        }
    }
    private final AtomicLong tasksStarted = new AtomicLong();
    private final AtomicLong leaseWaits = new AtomicLong();
    private final AtomicLong leaseWaitNanos = new AtomicLong();
    private final AtomicLong reservationWaits = new AtomicLong();
    private final AtomicLong reservationWaitNanos = new AtomicLong();
    private final SchemaRegistryWait schemaRegistry = new SchemaRegistryWait();
    private final Stalls stalls = new Stalls();
    private volatile boolean stopping;
    /** The tasks' last IDs a clean stop still has to write ({@link PreCommitHooks}); null: none. */
    private volatile PreCommitHooks lastIds;

    /**
     * Counters of one partition summed over every task this instance ran for it.
     *
     * @param issued            IDs issued
     * @param clockBehindEvents IDs issued while the wall clock was behind the generator
     * @param borrowedUnits     time units borrowed because a unit's sequence ran out
     * @param excessLeadEvents  times an ID would have gone past {@code id.max-lead}
     */
    public record Totals(long issued, long clockBehindEvents, long borrowedUnits, long excessLeadEvents) {
        static final Totals ZERO = new Totals(0, 0, 0, 0);

        Totals plus(TaskStats task) {
            return new Totals(issued + task.issued(), clockBehindEvents + task.clockBehindEvents(),
                    borrowedUnits + task.borrowedUnits(), excessLeadEvents + task.excessLeadEvents());
        }
    }

    synchronized TaskStats open(int partition, long worker, long nowMillis, java.util.function.LongSupplier clock) {
        TaskStats stats = new TaskStats(partition, worker, nowMillis, clock);
        tasks.put(partition, stats);
        tasksStarted.incrementAndGet();
        return stats;
    }

    synchronized void close(TaskStats stats) {
        if (tasks.remove(stats.partition(), stats)) {
            retired.merge(stats.partition(), Totals.ZERO.plus(stats), (a, b) -> a.plus(stats));
            ResumeDecision resume = stats.resume();
            if (resume != null) {
                retiredResumes.merge(resume.source(), 1L, Long::sum);
            }
        }
    }

    /** Called by the dead-letter handler for every record it routes, with its reason. */
    public void deadLetter(BadRecordException.Code reason) {
        deadLetters.incrementAndGet();
        deadLettersByReason.get(reason).incrementAndGet();
    }

    /** Records routed to the dead-letter topic with {@code reason} since this instance started. */
    public long deadLetters(BadRecordException.Code reason) {
        return deadLettersByReason.get(reason).get();
    }

    /** The tasks running now, by partition. */
    public Map<Integer, TaskStats> tasks() {
        return new TreeMap<>(tasks);
    }

    /** Counters by partition, over every task this instance ran since it started (running ones included). */
    public synchronized Map<Integer, Totals> totals() {
        Map<Integer, Totals> all = new TreeMap<>(retired);
        tasks.forEach((partition, task) -> all.merge(partition, Totals.ZERO.plus(task), (a, b) -> a.plus(task)));
        return all;
    }

    /** Task starts by the input that decided the resume point ({@link ResumeDecision#source()}), since this instance started. */
    public synchronized Map<String, Long> resumesBySource() {
        Map<String, Long> all = new TreeMap<>(retiredResumes);
        tasks.values().forEach(task -> {
            ResumeDecision resume = task.resume();
            if (resume != null) {
                all.merge(resume.source(), 1L, Long::sum);
            }
        });
        return all;
    }

    public long deadLetters() {
        return deadLetters.get();
    }

    /** An ID waited {@code nanos} for its reservation to be acknowledged (any stream thread). */
    void reservationWaited(long nanos) {
        reservationWaits.incrementAndGet();
        reservationWaitNanos.addAndGet(nanos);
    }

    /** A task's next ID waited {@code nanos} for its lease: a takeover, or a confirmation that came late (any stream thread). */
    void leaseWaited(long nanos) {
        leaseWaits.incrementAndGet();
        leaseWaitNanos.addAndGet(nanos);
    }

    /** Waits of a task's next ID for its lease since this instance started (one per task start, and one per late confirmation). */
    public long leaseWaits() {
        return leaseWaits.get();
    }

    /** How long they waited in all, in seconds. */
    public double leaseWaitSeconds() {
        return leaseWaitNanos.get() / 1e9;
    }

    /** IDs that waited for a reservation's acknowledgement since this instance started (none while renewals keep ahead). */
    public long reservationWaits() {
        return reservationWaits.get();
    }

    /** How long they waited in all, in seconds. */
    public double reservationWaitSeconds() {
        return reservationWaitNanos.get() / 1e9;
    }

    /** The instance stops cleanly: its last commits write the exact last ID of every task ({@link PreCommitHooks}, {@link #awaitLastIds}). */
    public void stopping() {
        stopping = true;
    }

    /** Whether this instance stops cleanly ({@link #stopping}): no longer ready, though Kafka Streams may still run. */
    public boolean isStopping() {
        return stopping;
    }

    /**
     * The topology's hooks, run once this instance stops cleanly ({@link PreCommitHooks#atCleanStop}): {@link #awaitLastIds}
     * waits for them and {@link #beforePoll} runs them.
     */
    public PreCommitHooks cleanStopHooks() {
        return hooks(PreCommitHooks.atCleanStop(this::isStopping));
    }

    /** Hooks that run at every commit when {@code everyCommit} (else as {@link #cleanStopHooks()}), held as the topology's. */
    PreCommitHooks hooks(boolean everyCommit) {
        return hooks(PreCommitHooks.create(everyCommit, this::isStopping));
    }

    private PreCommitHooks hooks(PreCommitHooks hooks) {
        lastIds = hooks;
        return hooks;
    }

    /**
     * Called on a stream thread right before each poll of its main consumer (the stamper's consumer wrapper): once the
     * instance stops, the thread writes its tasks' last IDs for the stop's last commit ({@link PreCommitHooks#beforePoll}).
     */
    public void beforePoll() {
        PreCommitHooks hooks = lastIds;
        if (hooks != null) {
            hooks.beforePoll();
        }
    }

    /**
     * After {@link #stopping()}: waits until every task's last ID is written in its thread's open transaction, so that the
     * stop's last commit carries it ({@link PreCommitHooks}), at most {@code limit}.
     *
     * @return the number of tasks whose last ID is still not written (0: all are)
     */
    public int awaitLastIds(java.time.Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        PreCommitHooks hooks = lastIds;
        int unwritten = hooks == null ? 0 : hooks.unwritten();
        while (unwritten > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
            unwritten = hooks.unwritten();
        }
        return unwritten;
    }

    /** Held partitions with input waiting that issue nothing (the stall watch's last look). */
    public Stalls stalls() {
        return stalls;
    }

    /** Whether tasks wait for the schema registry of Avro and Protobuf values now. */
    public SchemaRegistryWait schemaRegistry() {
        return schemaRegistry;
    }

    /** Task starts since this instance started (restarts and rebalances included). */
    public long tasksStarted() {
        return tasksStarted.get();
    }
}
