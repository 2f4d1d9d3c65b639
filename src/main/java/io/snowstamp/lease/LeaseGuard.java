package io.snowstamp.lease;

import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The check a task makes before each ID it issues: returns at once while its lease is confirmed,
 * waits while it is not (a new lease waiting out the previous owner's term, or a verifier that has not
 * reached the changelog lately), and throws when the task must not issue here:
 * {@link TaskMigratedException} when another task holds a newer lease, or when no confirmation came
 * for {@link #MAX_WAIT_NANOS} (Kafka Streams closes the thread's tasks without committing and
 * rejoins the group, as for any task that moved); {@link TaskCorruptedException} when the previous
 * owner wrote after this task's restore (Kafka Streams restores the task again). Nothing is issued
 * before the throw, and the input record is processed again by whoever owns the partition then.
 *
 * <p>Per record: one {@link System#nanoTime()} and three volatile reads. Used by one stream thread.
 */
public final class LeaseGuard {
    private static final Logger log = LoggerFactory.getLogger(LeaseGuard.class);
    /** How long a task waits for a confirmation before it gives its partitions back to the group. */
    static final long MAX_WAIT_NANOS = TimeUnit.SECONDS.toNanos(20);
    private static final long PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private static final LeaseGuard NONE = new LeaseGuard(null, null, null, null);
    private static final Runnable NOTHING = () -> { };

    /** The guard of a task that holds no lease yet: only for a processor before its first {@code init}. */
    public static LeaseGuard none() {
        return NONE;
    }

    /** A guard without a lease: every check passes (topology tests, and {@code -Dsnowstamp.test.lease=off}). */
    static LeaseGuard unchecked() {
        return new LeaseGuard(null, null, null, null);
    }

    /**
     * A guard without a lease on {@code ticker}'s time: every check passes and every write counts as read back (tests of
     * what waits beside a lease).
     */
    public static LeaseGuard unchecked(Ticker ticker) {
        return new LeaseGuard(null, null, null, null, NOTHING, ticker.nanoTime(), ticker);
    }

    /** A guard without a lease that tells {@code release} when it is released (tests of what holds guards). */
    public static LeaseGuard unchecked(Runnable release) {
        return new LeaseGuard(null, null, null, release);
    }

    private final PartitionLease lease;
    private final TaskId task;
    private final String name;
    private final Runnable release;
    private final Runnable parkedForTakeover;
    private final Runnable hurry;
    private final long takenAt;
    private final Ticker ticker;
    private boolean first = true;
    /** late counters the task took and gave back ({@link #giveBackLateCounters}) */
    private final java.util.Set<String> givenBack = new java.util.TreeSet<>();

    LeaseGuard(PartitionLease lease, TaskId task, String name, Runnable release) {
        this(lease, task, name, release, NOTHING, System.nanoTime(), Ticker.SYSTEM);
    }

    /**
     * A guard over {@code lease} on {@code ticker}'s time, taken now: for a model that drives the lease itself (the
     * stamper's guards come from {@link LeaseVerifier#take}).
     */
    public static LeaseGuard of(PartitionLease lease, TaskId task, String name, Ticker ticker) {
        return of(lease, task, name, ticker, NOTHING);
    }

    /** The same, whose {@link #hurry} runs {@code hurry}. */
    public static LeaseGuard of(PartitionLease lease, TaskId task, String name, Ticker ticker, Runnable hurry) {
        return new LeaseGuard(lease, task, name, null, NOTHING, hurry, ticker.nanoTime(), ticker);
    }

    /**
     * @param parkedForTakeover told each time a record reaches the task before its takeover wait is over (the thread waits)
     * @param takenAt           when the lease was taken ({@link System#nanoTime()}): a new lease's wait for its first
     *                          confirmation counts from there, since the task's input may have been held back meanwhile
     */
    LeaseGuard(PartitionLease lease, TaskId task, String name, Runnable release, Runnable parkedForTakeover, long takenAt,
               Ticker ticker) {
        this(lease, task, name, release, parkedForTakeover, NOTHING, takenAt, ticker);
    }

    /** @param hurry asks the verifier for a round now ({@link #hurry}) */
    LeaseGuard(PartitionLease lease, TaskId task, String name, Runnable release, Runnable parkedForTakeover, Runnable hurry,
               long takenAt, Ticker ticker) {
        this.hurry = hurry;
        this.ticker = ticker;
        this.lease = lease;
        this.task = task;
        this.name = name;
        this.release = release;
        this.parkedForTakeover = parkedForTakeover;
        this.takenAt = takenAt;
    }

    /**
     * Returns when the task may issue one ID now.
     *
     * @return true on the first call that passes under this lease (the previous owner has stopped by now: a task
     *         whose resume point depends on what the previous owner sent last may read it again here); false
     *         without a lease
     * @throws TaskMigratedException when another task holds a newer lease, or no confirmation came in time
     * @throws TaskCorruptedException when the previous owner wrote after this task's restore
     */
    public boolean check() {
        if (lease == null) {
            return false;
        }
        long start = ticker.nanoTime();
        PartitionLease.Verdict verdict = lease.check(start);
        if (verdict == PartitionLease.Verdict.ISSUE && !first) {
            return false;
        }
        waitFor(verdict, start);
        boolean wasFirst = first;
        first = false;
        return wasFirst;
    }

    /**
     * Whether {@link #check} would wait now (a new lease waiting out the previous owner's term, or a lease without a
     * recent confirmation): the task sets its record aside and asks again later, so that its stream thread stamps the
     * other tasks meanwhile. Never waits; a lost lease or a stale restore answers false ({@link #check} then acts on it
     * at once).
     *
     * @param waitingSince when the task's input started waiting ({@link #ticker} nanos; -1: not yet)
     * @throws TaskMigratedException once the wait outlasted {@link #MAX_WAIT_NANOS}, as {@link #check} would
     */
    public boolean mustWait(long waitingSince) {
        if (lease == null) {
            return false;
        }
        long now = ticker.nanoTime();
        if (lease.check(now) != PartitionLease.Verdict.WAIT) {
            return false;
        }
        boolean taking = !lease.permitted();
        long since = taking ? takenAt : waitingSince;
        if (since >= 0 && now - since >= MAX_WAIT_NANOS) {
            waitFor(PartitionLease.Verdict.WAIT, now, since);      // gives up at once, as a blocking check would
        }
        return true;
    }

    private void waitFor(PartitionLease.Verdict initial, long start) {
        boolean taking = !lease.permitted();
        if (initial == PartitionLease.Verdict.WAIT && taking) {
            parkedForTakeover.run();
        }
        // a new lease gives up MAX_WAIT after it was taken, not after its first record: its input waited beside the
        // thread until the takeover was over or MAX_WAIT had passed (runtime/TakeoverHold)
        waitFor(initial, start, taking ? takenAt : start);
    }

    private void waitFor(PartitionLease.Verdict initial, long start, long waitingSince) {
        boolean taking = !lease.permitted();
        PartitionLease.Verdict verdict = initial;
        while (verdict == PartitionLease.Verdict.WAIT) {
            long now = ticker.nanoTime();
            if (now - waitingSince >= MAX_WAIT_NANOS) {
                long since = lease.sinceConfirmed(now);
                log.atWarn().addKeyValue("event", "lease-unconfirmed").addKeyValue("task", name)
                        .log("{}: no confirmation of lease {} from the changelog for {}; no further ID is issued here: closing"
                                + " the task and rejoining the group", name, lease.mine(),
                                since < 0 ? "its whole start (" + TimeUnit.NANOSECONDS.toMillis(now - waitingSince) + " ms)"
                                        : TimeUnit.NANOSECONDS.toMillis(since) + " ms");
                throw new TaskMigratedException(name + ": lease " + lease.mine() + " not confirmed by the changelog in time");
            }
            ticker.park(PAUSE_NANOS);
            verdict = lease.check(ticker.nanoTime());
        }
        long waited = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - start);
        switch (verdict) {
            case LOST -> {
                log.atWarn().addKeyValue("event", "lease-lost").addKeyValue("task", name)
                        .log("{}: the changelog shows a newer lease ({}) than this task's ({}): the partition has moved;"
                                + " no further ID is issued here: closing the task and rejoining the group", name,
                                lease.lostTo(), lease.mine());
                throw new TaskMigratedException(name + ": lease lost to " + lease.lostTo());
            }
            case STALE -> {
                log.atInfo().addKeyValue("event", "lease-stale").addKeyValue("task", name)
                        .log("{}: the previous owner wrote to the changelog after this task restored it (first at {});"
                                + " restoring again before issuing", name, lease.foreignWrite());
                throw new TaskCorruptedException(Set.of(task));
            }
            default -> {
                if (taking || first) {
                    log.atInfo().addKeyValue("event", "lease-confirmed").addKeyValue("task", name).addKeyValue("waitedMillis", waited)
                            .log("{}: lease {} confirmed by the changelog after {} ms (the previous owner's term has run out);"
                                    + " issuing", name, lease.mine(), waited);
                } else if (waited >= 1000) {
                    log.info("{}: lease {} confirmed again after {} ms without a confirmation", name, lease.mine(), waited);
                }
            }
        }
    }

    /**
     * The check after an ID was taken, before it leaves: the ID may be forwarded only if the lease still holds now, after
     * the generator read its clock and after the reservation covering the ID was acknowledged. A pause anywhere between
     * the check before the ID and here (GC, SIGSTOP) can outlast the term, and then a new owner may already issue; the ID
     * is dropped (never forwarded) and the task stops as for a lost lease. Never waits.
     *
     * @throws TaskMigratedException when the term ran out or a newer lease showed since the check before the ID
     */
    public void checkIssued() {
        if (lease == null) {
            return;
        }
        long now = ticker.nanoTime();
        PartitionLease.Verdict verdict = lease.check(now);
        if (verdict == PartitionLease.Verdict.ISSUE) {
            return;
        }
        long since = lease.sinceConfirmed(now);
        log.atWarn().addKeyValue("event", "lease-lapsed-while-issuing").addKeyValue("task", name)
                .log("{}: lease {} {} while an ID was being taken (last confirmation sent {} ms ago): the ID is dropped, no"
                                + " further ID is issued here: closing the task and rejoining the group", name, lease.mine(),
                        verdict == PartitionLease.Verdict.LOST ? "was lost to " + lease.lostTo() : "ran out of its term",
                        TimeUnit.NANOSECONDS.toMillis(since));
        throw new TaskMigratedException(name + ": lease " + lease.mine() + " lapsed while an ID was being taken");
    }

    /** Whether a lease reader reads the changelog for this guard (false without a lease). */
    public boolean reads() {
        return lease != null;
    }

    /** Whether a newer lease showed in the changelog: this task never issues again (false without a lease). */
    public boolean lost() {
        return lease != null && lease.lostTo() != null;
    }

    /** Whether the task may write its state now ({@link PartitionLease#mayWrite}); true without a lease. */
    public boolean mayWrite() {
        return lease == null || lease.mayWrite(ticker.nanoTime(), takenAt);
    }

    /**
     * The highest ID that any changelog record read for this lease proves may have been issued (-1: none, or no lease).
     * A task resumes above it when its first check passes: that read went to the committed end after the previous
     * owner's last term, so it holds every reservation the previous owner could still issue under.
     */
    public long highestCovered() {
        return lease == null ? -1 : lease.highestCovered();
    }

    /**
     * Per counter of a store of many (a sequence tag): the highest value that another writer's changelog record before
     * this task's own lease record covers ({@link PartitionLease#coveredCounters}; empty without a lease).
     * A task raises each counter above it when its first check passes, as {@link #highestCovered} for the one counter.
     */
    public Map<String, Long> coveredCounters() {
        return lease == null ? Map.of() : lease.coveredCounters();
    }

    /** {@link PartitionLease#hasLateCounters}, or any given back (false without a lease). */
    public boolean hasLateCounters() {
        return lease != null && (!givenBack.isEmpty() || lease.hasLateCounters());
    }

    /**
     * {@link PartitionLease#takeLateCounters}: the counters another holder's late write superseded, with those given back
     * (empty without a lease).
     */
    public java.util.Set<String> takeLateCounters() {
        if (lease == null) {
            return java.util.Set.of();
        }
        java.util.Set<String> taken = new java.util.TreeSet<>(givenBack);
        givenBack.clear();
        taken.addAll(lease.takeLateCounters());
        return taken;
    }

    /**
     * Counters taken ({@link #takeLateCounters}) and not written again: the task stopped before their writes because it
     * could no longer write ({@link #mayWrite}). The next {@link #takeLateCounters} gives them again — dropped, such a
     * counter's late lower write would stay its newest value in the log, for compaction to keep.
     */
    public void giveBackLateCounters(java.util.Collection<String> counters) {
        if (lease != null) {
            givenBack.addAll(counters);
        }
    }

    /**
     * Whether a store's record that the task's restore read lies after the last record naming {@code mark}, or another
     * lease was taken after it ({@link PartitionLease#writtenAfter}); false without a lease. Meaningful once
     * {@link #readBack}.
     */
    public boolean writtenAfter(LeaseMark mark) {
        return lease != null && lease.writtenAfter(mark);
    }

    /**
     * Whether the lease's own record has been read back from the changelog (confirmed at least once); true without a
     * lease. The task's later writes go through another producer: only after this can none of them land before it.
     */
    public boolean readBack() {
        return lease == null || lease.confirmedOnce();
    }

    /**
     * The changelog offset (exclusive) up to which a round read the partition and found this lease the owner, with no
     * newer lease before it (-1: none yet; {@link Long#MAX_VALUE} without a lease). A write of this task acknowledged at
     * an offset below it lies before every newer lease record in the log, whichever broker answered that round — a
     * replaced leader that does not know it reports an end below every record its successor acknowledged.
     */
    public long readEnd() {
        return lease == null ? Long.MAX_VALUE : lease.readEnd();
    }

    /** Asks the verifier for a round now, not at its next period: a value waits for a write to be read back. Any thread. */
    public void hurry() {
        hurry.run();
    }

    /** The monotonic clock this guard's checks read (and whatever waits beside them should read). */
    public Ticker ticker() {
        return ticker;
    }

    /** The task is closing: the verifier stops reading for it. */
    public void release() {
        if (release != null) {
            release.run();
        }
    }
}
