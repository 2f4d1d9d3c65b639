package io.snowstamp.stream;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

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
    private final AtomicLong epoch = new AtomicLong();
    private final AtomicReference<ResumeDecision> resume = new AtomicReference<>();
    private final long startedAtMillis;

    public TaskStats(int partition, long worker, long startedAtMillis) {
        this.partition = partition;
        this.worker = worker;
        this.startedAtMillis = startedAtMillis;
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
}
