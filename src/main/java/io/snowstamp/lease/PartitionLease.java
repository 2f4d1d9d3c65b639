package io.snowstamp.lease;

import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One task's lease on one partition: what the changelog says about who owns the partition, and
 * whether the task may issue an ID now. Pure (times are {@link System#nanoTime()} values passed in);
 * the {@link LeaseVerifier} thread calls {@link #observe} and {@link #confirmed}, the task's stream
 * thread calls {@link #check}.
 *
 * <p><b>Who owns.</b> Every task start writes a lease record with the epoch it restored plus one.
 * Reading the partition's changelog from its start, in log order, the owner changes only when a record
 * names an epoch greater than every earlier one, and is then that record's {@link LeaseMark}: a
 * stale writer (an old owner still sending heartbeats) never takes the lease back, and of two tasks
 * that restored the same epoch the one whose record came first wins. The task has lost for good
 * once the owner is someone else with an epoch at least its own.
 *
 * <p><b>When it may issue.</b> A verification sends at {@code send} a request for the changelog's end,
 * reads up to it and, if this task is the owner there, confirms it. The task may issue while
 * {@code now < lastSend + term}: a new owner's lease record was not in the log yet when that request
 * was answered (else this task would have lost), so nobody can have issued under a newer lease
 * before {@code lastSend + term} — because a new owner first waits: it may issue only once a
 * confirmation was <em>sent</em> at least {@code takeoverWait} (the term, stretched for clock-rate
 * drift) after its first confirmation was <em>received</em>, which came after its lease record was
 * committed. And only if, by then, nobody else wrote to the partition's changelog after the point its
 * restore read up to ({@code restoreEnd}): such a write (the old owner's reservation or heartbeat) is
 * missing from the restored state, so the task must restore again ({@link Verdict#STALE}).
 *
 * <p>Thread-safety: the verifier writes the plain fields before the volatile {@code lastSend}; the task
 * reads {@code lastSend} first.
 */
public final class PartitionLease {

    /** What a task may do now. */
    public enum Verdict {
        /** issue */
        ISSUE,
        /** not yet (a new lease waiting out the old one) or not now (no recent confirmation): wait for the verifier */
        WAIT,
        /** someone else holds a newer lease: this task must never issue again */
        LOST,
        /** the old owner wrote after this task's restore: restore again before issuing */
        STALE
    }

    /** {@code restoreEnd} of a lease whose task reads what it needs again at its first ID: no write sends it back to restore. */
    public static final long NO_RESTORE_CHECK = Long.MAX_VALUE;
    /** {@code restoreEnd} when the restore's end was not reported: writes after this task's own lease record are checked. */
    public static final long RESTORE_END_UNKNOWN = -1;

    private final int partition;
    private final LeaseMark mine;
    private final long restoreEnd;
    private final long countersFrom;
    private final long termNanos;
    private final long takeoverWaitNanos;

    // verifier thread
    private long maxEpoch = -1;
    private LeaseMark owner;
    private long firstConfirmed;
    /** Offset of this task's own first lease record read back (-1: not read yet); the foreign-write check's start when the restore end is unknown. */
    private long ownOffset = -1;
    private volatile long highestCovered = -1;
    /** Per counter of a store of many: the highest covered by another writer's record before {@code ownOffset}. */
    private final Map<String, Long> coveredCounters = new ConcurrentHashMap<>();
    /** Counters whose record after {@code ownOffset} another holder wrote (a late write), not yet taken by the task. */
    private final java.util.Set<String> lateCounters = ConcurrentHashMap.newKeySet();
    /** Before this task's own lease record: the last other lease named, and whether a counter's record came after it. */
    private volatile LeaseMark lastOther;
    private volatile boolean counterAfterLastOther;
    private volatile long foreignOffset = -1;
    private volatile LeaseMark foreign;
    private volatile LeaseMark lostTo;
    private volatile boolean confirmedOnce;
    private volatile long readEnd = -1;
    private volatile long lastSend;

    // task thread
    private boolean permitted;

    /**
     * @param restoreEnd the first changelog offset the task's restore did not read ({@link #RESTORE_END_UNKNOWN}: only
     *                   what comes after this task's own lease record is checked; {@link #NO_RESTORE_CHECK}: nothing is)
     * @param termNanos how long a confirmation lets the task issue, from the moment its request was sent
     * @param takeoverWaitNanos how long a new lease waits out the previous owner's last term (at least the term)
     */
    public PartitionLease(int partition, LeaseMark mine, long restoreEnd, long termNanos, long takeoverWaitNanos) {
        this(partition, mine, restoreEnd, 0, termNanos, takeoverWaitNanos);
    }

    /**
     * @param countersFrom the first changelog offset the task's restore did not read, whatever {@code restoreEnd} says
     *                     (0 when unknown): a counter's record before it was restored ({@link #writtenAfter})
     */
    public PartitionLease(int partition, LeaseMark mine, long restoreEnd, long countersFrom, long termNanos, long takeoverWaitNanos) {
        if (takeoverWaitNanos < termNanos) {
            throw new IllegalArgumentException("the takeover wait must cover the term: " + takeoverWaitNanos + " < " + termNanos);
        }
        this.partition = partition;
        this.mine = mine;
        this.restoreEnd = restoreEnd;
        this.countersFrom = countersFrom;
        this.termNanos = termNanos;
        this.takeoverWaitNanos = takeoverWaitNanos;
    }

    public int partition() {
        return partition;
    }

    public LeaseMark mine() {
        return mine;
    }

    /** Verifier: one changelog record of the partition, in log order from the start ({@code mark} null: names no lease). */
    void observe(long offset, LeaseMark mark) {
        observe(offset, mark, -1);
    }

    /**
     * Verifier: one changelog record of the partition, in log order from the start ({@code mark} null: names no lease),
     * which proves that IDs up to {@code covered} may have been issued (-1: none).
     */
    void observe(long offset, LeaseMark mark, long covered) {
        observe(offset, mark, covered, null);
    }

    /**
     * Verifier: one changelog record of the partition, in log order from the start, which proves that numbers of
     * {@code counter} up to {@code covered} may have been issued (null counter: the partition's one counter). A counter's
     * value counts in every record before this task's own lease record, the restored ones too: the restore kept only the
     * newest value of each counter, and that can be an older holder's late write (sent before a newer holder took the
     * partition, landed after that holder's reservation), below numbers the newer holder forwarded. A previous owner
     * issues nothing from a record after that lease record (it reads that lease first and stops).
     */
    void observe(long offset, LeaseMark mark, long covered, String counter) {
        observe(offset, mark, covered, counter, -1);
    }

    /**
     * As {@link #observe(long, LeaseMark, long, String)}, for a counter's record written by {@code writer}
     * ({@link LeaseMark#writer}; -1: not known): one by another that the restore did not read, before this task's own
     * lease record or after it, may now be the counter's newest value, lower than what this task holds.
     */
    void observe(long offset, LeaseMark mark, long covered, String counter, long writer) {
        boolean late = counter != null && isEarlierWriter(writer) && (offset >= countersFrom || ownOffset >= 0 && offset > ownOffset);
        if (ownOffset < 0 && !mine.equals(mark)) {
            if (mark != null) {
                lastOther = mark;
                counterAfterLastOther = false;
            } else if (counter != null && offset < countersFrom) {
                // restored as a counter's newest value (what lies after the restore's end, the task did not restore)
                counterAfterLastOther = true;
            }
        }
        if (counter != null) {
            if (covered >= 0 && ownOffset < 0 && !mine.equals(mark)) {
                coveredCounters.merge(counter, covered, Math::max);
            }
            if (late) {
                // after the merge: the task, taking it, must see whether the record covers more than it holds
                lateCounters.add(counter);
            }
        } else if (covered > highestCovered && !mine.equals(mark)) {
            highestCovered = covered;   // this task's own records (its lease, its reservations) prove nothing about others
        }
        if (mark != null && mark.epoch() > maxEpoch) {
            maxEpoch = mark.epoch();
            owner = mark;
        }
        if (ownOffset < 0 && mine.equals(mark)) {
            ownOffset = offset;
        }
        long checkFrom = restoreEnd == RESTORE_END_UNKNOWN ? (ownOffset < 0 ? Long.MAX_VALUE : ownOffset + 1) : restoreEnd;
        if (!mine.equals(mark) && offset >= checkFrom && foreignOffset < 0) {
            foreign = mark;
            foreignOffset = offset;
        }
        if (owner != null && !owner.equals(mine) && owner.epoch() >= mine.epoch() && lostTo == null) {
            lostTo = owner;
        }
    }

    /**
     * Verifier: the record at {@code offset} cannot be read by this build (a newer build's format). After this task's own
     * lease record it is the write of a holder that took the partition since — a rolling upgrade, this task the old
     * build's zombie — whose lease this build cannot see: the lease is lost, never "no lease named". (Before it, the
     * restore would have failed on such a value, or {@link #observe} counts it as another writer's.)
     */
    void unreadable(long offset) {
        if (ownOffset >= 0 && offset > ownOffset && lostTo == null) {
            lostTo = new LeaseMark(mine.epoch() + 1, "a holder whose record at offset " + offset + " this build cannot read");
        }
    }

    /**
     * Verifier: the log this lease was read in is not the partition's log any more: its topic deleted and created again
     * under the same name, or the log cut below what was read. This task's own lease record went with it, and a holder in
     * the new log starts its epochs again at 1, below this one, so no record there would ever count as newer: lost for good.
     */
    void replaced(String why) {
        if (lostTo == null) {
            lostTo = new LeaseMark(mine.epoch() + 1, why);
        }
    }

    /**
     * Whether a record's {@code writer} is another holder whose write this task must supersede: one of an earlier epoch
     * (0: an earlier format's), or another holder of this task's epoch (the loser of the same start). A writer of a later
     * epoch holds a newer lease, whose record this task reads next and stops: never written over.
     */
    private boolean isEarlierWriter(long writer) {
        if (writer < 0 || writer == mine.writer()) {
            return false;
        }
        return LeaseMark.epochOf(writer) <= LeaseMark.epochOf(mine.writer());
    }

    /**
     * Verifier: the changelog was read up to {@code end} (exclusive), an end requested at {@code sendNanos}, answered by
     * {@code receivedNanos}; confirms the lease if this task owns the partition there.
     */
    void confirmed(long sendNanos, long receivedNanos, long end) {
        if (lostTo != null || !mine.equals(owner)) {
            return;
        }
        if (end > readEnd) {
            readEnd = end;
        }
        if (!confirmedOnce) {
            firstConfirmed = receivedNanos;
            confirmedOnce = true;
        }
        lastSend = sendNanos;
    }

    /** Task: may it issue at {@code now}? Before each ID. */
    public Verdict check(long now) {
        long send = lastSend;
        if (lostTo != null) {
            return Verdict.LOST;
        }
        if (!permitted) {
            if (!confirmedOnce || send - firstConfirmed < takeoverWaitNanos) {
                return Verdict.WAIT;
            }
            if (foreignOffset >= 0) {
                return Verdict.STALE;
            }
            permitted = true;
        }
        return now - send < termNanos ? Verdict.ISSUE : Verdict.WAIT;
    }

    /**
     * Any thread: whether the task's first ID would still wait out the previous owner's term now. A hint
     * for keeping the task's input away from its stream thread meanwhile ({@link LeaseVerifier#awaitingTakeover});
     * {@link #check} alone decides whether an ID may be issued. False once the lease is lost or stale: the
     * task's next check throws, and that check needs a record.
     */
    public boolean awaitingTakeover() {
        if (lostTo != null || foreignOffset >= 0) {
            return false;
        }
        if (!confirmedOnce) {
            return true;
        }
        // confirmedOnce (volatile) read first: firstConfirmed, written before it, is visible
        return lastSend - firstConfirmed < takeoverWaitNanos;
    }

    /**
     * Verifier: from when ({@link System#nanoTime()}) a confirmation sent ends this lease's takeover wait;
     * {@link Long#MAX_VALUE} when no such time is ahead (not confirmed yet, wait over, lost, stale). Read on the
     * verifier's thread, which writes what it reads.
     */
    long takeoverDue() {
        if (!confirmedOnce || lostTo != null || foreignOffset >= 0 || lastSend - firstConfirmed >= takeoverWaitNanos) {
            return Long.MAX_VALUE;
        }
        return firstConfirmed + takeoverWaitNanos;
    }

    /**
     * Task: may it write its state now? Not once the lease is lost, nor, once confirmed, while no confirmation is within
     * its term — before its first ID too: a holder that never issued (no input) and froze would otherwise write a
     * periodic checkpoint or a clean-close marker when it wakes, before its reader shows the newer lease, and that late
     * write would become the changelog's newest value. Before its first confirmation, {@code takenAt} (when the lease was
     * taken, {@code now}'s clock) bounds it the same way: a new lease's own writes are made when it is taken.
     */
    public boolean mayWrite(long now, long takenAt) {
        long send = lastSend;
        return lostTo == null && (confirmedOnce ? now - send < termNanos : now - takenAt < termNanos);
    }

    /**
     * The highest ID any record read so far proves may have been issued (-1: none). Read at a task's first permission,
     * it covers every reservation acknowledged before the previous owner's last passing check (design.md, "The
     * ownership lease"), whatever the restore gave.
     */
    public long highestCovered() {
        return highestCovered;
    }

    /**
     * Per counter of a store of many (a sequence tag), the highest value another writer's record before this task's own
     * lease record covers. Read at a task's first permission, it holds every reservation a previous owner may still
     * number in that the restore did not give: one after the restore's end, and one the restore read but that a later,
     * lower write of an older holder landing late hid (design.md, "Sequence numbers: why two owners never forward the
     * same number"). Unmodifiable, live.
     */
    public Map<String, Long> coveredCounters() {
        return Collections.unmodifiableMap(coveredCounters);
    }

    /** Task: whether {@link #takeLateCounters} has any to give now (cheap: asked before every record). */
    public boolean hasLateCounters() {
        return !lateCounters.isEmpty();
    }

    /**
     * Task: the counters (sequence tags) whose record another holder wrote after this task's restore ended — a write sent
     * before that holder saw a newer lease, landed late; or a segment reserved after the restore, which
     * {@link #coveredCounters} holds — found since the last call (each once). That record is now the counter's newest
     * value in the log, and may lie below what this task holds: written again by the task (unless it covers more than the
     * task holds), this task's value is newest again, before compaction can drop it.
     */
    public java.util.Set<String> takeLateCounters() {
        if (lateCounters.isEmpty()) {
            return java.util.Set.of();
        }
        java.util.Set<String> taken = new java.util.TreeSet<>();
        for (String counter : lateCounters) {
            if (lateCounters.remove(counter)) {
                taken.add(counter);
            }
        }
        return taken;
    }

    /**
     * The end (exclusive) up to which a confirming round read the partition (-1: none yet): no record below it names a
     * newer lease, so a write of this task below it comes before every newer lease record in the log.
     */
    public long readEnd() {
        return readEnd;
    }

    /** The highest epoch any record read so far named (-1: none). */
    long highestEpoch() {
        return maxEpoch;
    }

    /**
     * Whether a counter's record that the task's restore read lies after the last record naming {@code mark}, or
     * another lease was named after it: true also when {@code mark} was not the last other lease named (a sequence task
     * trusts its predecessor's clean-close marker only when nothing was written after it). Meaningful once
     * {@link #confirmedOnce}.
     */
    public boolean writtenAfter(LeaseMark mark) {
        return !mark.equals(lastOther) || counterAfterLastOther;
    }

    /** Whether a round has confirmed this lease (its own record was read back). */
    public boolean confirmedOnce() {
        return confirmedOnce;
    }

    /** Whether the task has issued under this lease (its first permission passed). */
    public boolean permitted() {
        return permitted;
    }

    /** Who holds the newer lease this task lost to (null: not lost). */
    public LeaseMark lostTo() {
        return lostTo;
    }

    /** A line on what the changelog showed after the restore (for STALE). */
    public String foreignWrite() {
        long offset = foreignOffset;
        return offset < 0 ? "none" : "offset " + offset + " (" + (foreign == null ? "no lease named" : foreign) + ")";
    }

    /** Nanoseconds since the last confirmation was sent, at {@code now} (or -1: never confirmed). */
    public long sinceConfirmed(long now) {
        return confirmedOnce ? now - lastSend : -1;
    }
}
