package io.snowstamp.stream;

import io.snowstamp.resume.ResumeDecision;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * What one task's stamper has done, for metrics, health and the state endpoint. Written by the
 * task's stream thread only (ordered writes, no locks on the hot path), read from any thread.
 */
public final class TaskStats {
    private final int partition;
    private final long worker;
    private final AtomicLong issued = new AtomicLong();
    private final AtomicLong lastId = new AtomicLong(-1);
    private final AtomicLong lastIdTimeMillis = new AtomicLong(-1);
    private final AtomicLong excessLeadEvents = new AtomicLong();
    private final AtomicLong clockBehindEvents = new AtomicLong();
    private final AtomicLong borrowedUnits = new AtomicLong();
    private final AtomicLong heldBack = new AtomicLong();
    private final AtomicLong skippedStamped = new AtomicLong();
    private final AtomicLong epoch = new AtomicLong();
    private final AtomicReference<ResumeDecision> resume = new AtomicReference<>();
    private final AtomicLong lastStampedAtMillis = new AtomicLong(-1);
    /** Wall-clock Unix millis when the wait in progress of the task's next ID began (-1: none waits). */
    private final AtomicLong waitingSinceMillis = new AtomicLong(-1);
    private final long startedAtMillis;
    private final LongSupplier clock;
    /** Whether the changelog confirmed the task's lease once (read from any thread: a volatile read behind it). */
    private volatile java.util.function.BooleanSupplier leaseConfirmed = () -> true;

    /** @param clock the stamper's wall clock (Unix millis), read once per ID to date the last stamp */
    public TaskStats(int partition, long worker, long startedAtMillis, LongSupplier clock) {
        this.partition = partition;
        this.worker = worker;
        this.startedAtMillis = startedAtMillis;
        this.clock = clock;
    }

    /** @param confirmed whether the changelog confirmed the task's lease once ({@code LeaseGuard#readBack}); thread-safe */
    void leaseConfirmedBy(java.util.function.BooleanSupplier confirmed) {
        leaseConfirmed = confirmed;
    }

    /** Whether the task's lease was confirmed once: before that the task is still starting, whatever its input. */
    public boolean leaseConfirmed() {
        return leaseConfirmed.getAsBoolean();
    }

    void started(ResumeDecision decision, long leaseEpoch) {
        resume.set(decision);
        epoch.set(leaseEpoch);
    }

    void issued(long id, long idTimeMillis, long clockBehind, long borrowed) {
        issued.setRelease(issued.getPlain() + 1);
        lastId.setRelease(id);
        lastIdTimeMillis.setRelease(idTimeMillis);
        clockBehindEvents.setRelease(clockBehind);
        borrowedUnits.setRelease(borrowed);
        lastStampedAtMillis.setRelease(clock.getAsLong());
    }

    /** An input its predecessor already stamped was skipped (at-least-once). */
    void skippedStamped() {
        skippedStamped.setRelease(skippedStamped.getPlain() + 1);
    }

    /** Inputs this task did not stamp because the output already had them (at-least-once, after a crash or a move). */
    public long skippedStampedInputs() {
        return skippedStamped.get();
    }

    void excessLead() {
        excessLeadEvents.incrementAndGet();
    }

    void heldBack(long records) {
        heldBack.set(records);
    }

    public int partition() {
        return partition;
    }

    public long worker() {
        return worker;
    }

    /** IDs issued since the task started. */
    public long issued() {
        return issued.getAcquire();
    }

    /** Last ID issued by this task, or -1. */
    public long lastId() {
        return lastId.getAcquire();
    }

    /** How far the last ID's time runs ahead of {@code nowMillis} (negative: behind); 0 before any ID. */
    public long leadMillis(long nowMillis) {
        long time = lastIdTimeMillis.getAcquire();
        return time < 0 ? 0 : time - nowMillis;
    }

    /** Times the ID would have gone past {@code id.max-lead}. */
    public long excessLeadEvents() {
        return excessLeadEvents.get();
    }

    /** IDs issued while the wall clock was behind the generator's time. */
    public long clockBehindEvents() {
        return clockBehindEvents.getAcquire();
    }

    /** Time units borrowed from the future because a unit's sequence ran out. */
    public long borrowedUnits() {
        return borrowedUnits.getAcquire();
    }

    /** Records currently held back by {@code id.on-excess-lead=pause}. */
    public long heldBack() {
        return heldBack.get();
    }

    public long epoch() {
        return epoch.get();
    }

    /** How the task's generator resumed, or null before its start completed. */
    public ResumeDecision resume() {
        return resume.get();
    }

    public long startedAtMillis() {
        return startedAtMillis;
    }

    /** Wall-clock Unix millis of the last record stamped, or -1 before the first. */
    public long lastStampedAtMillis() {
        return lastStampedAtMillis.getAcquire();
    }

    /**
     * How long this task has not stamped a record at {@code nowMillis}: since the last one, or since
     * the task started when it has stamped none; never negative. Grows while the partition's input
     * is idle too: a stall is this growing while records wait (consumer lag).
     */
    public long millisSinceLastStamp(long nowMillis) {
        long last = lastStampedAtMillis.getAcquire();
        return Math.max(0, nowMillis - (last < 0 ? startedAtMillis : last));
    }

    /** The task's next ID starts waiting (for its lease or its reservation), its records set aside meanwhile. */
    void waitStarted() {
        waitingSinceMillis.setRelease(clock.getAsLong());
    }

    /** The wait is over: the ID was issued, or the task gives up (it closes). */
    void waitEnded() {
        waitingSinceMillis.setRelease(-1);
    }

    /**
     * How long the wait in progress of the task's next ID has lasted at {@code nowMillis} (0: none waits). Unlike the wait
     * counters, which count a wait once it ends, this moves while a wait lasts: a wait that never ends shows here.
     */
    public long millisWaiting(long nowMillis) {
        long since = waitingSinceMillis.getAcquire();
        return since < 0 ? 0 : Math.max(0, nowMillis - since);
    }
}
