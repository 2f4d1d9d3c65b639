package io.snowstamp.sequence;

import io.snowstamp.ownership.PreCommitHooks;

import java.util.function.BooleanSupplier;

/**
 * Exactly-once: at a clean stop, {@code issued} of every tag of a task that advanced goes into the stop's last commit
 * (the periodic checkpoint writes it otherwise), through the thread's {@link PreCommitHooks}. Under at-least-once the
 * clean-close marker writes it and there is none of these. One per task incarnation, on its stream thread.
 */
final class IssuedAtStop implements PreCommitHooks.Hook {
    private final PreCommitHooks atStop;
    /** Wall-clock punctuations of the task, for the thread's {@link PreCommitHooks} sentinel. */
    private final PreCommitHooks.Scheduler punctuations;
    private final BooleanSupplier anyAdvanced;
    private final Runnable recordIssued;
    /** Waiting in {@link #atStop} to be written. */
    private boolean pending;
    private boolean closed;

    /**
     * @param anyAdvanced  whether a tag of the task issued numbers since its entry was last written
     * @param recordIssued writes {@code issued} of every such tag
     */
    IssuedAtStop(PreCommitHooks atStop, PreCommitHooks.Scheduler punctuations, BooleanSupplier anyAdvanced, Runnable recordIssued) {
        this.atStop = atStop;
        this.punctuations = punctuations;
        this.anyAdvanced = anyAdvanced;
        this.recordIssued = recordIssued;
    }

    /** Whether the instance stops cleanly now: a tag that numbers now writes its {@code issued} at once. */
    boolean stopping() {
        return atStop.stopping();
    }

    /** A tag advanced: the stop's last commit must name it. */
    void advanced() {
        if (!pending) {
            pending = true;
            atStop.pending(this, punctuations);
        }
    }

    @Override
    public void write() {
        pending = false;
        if (!closed) {
            recordIssued.run();
        }
    }

    @Override
    public boolean settled() {
        if (closed || !anyAdvanced.getAsBoolean()) {
            pending = false;
            return true;
        }
        return false;
    }

    void close() {
        closed = true;
        atStop.closed(this);
    }
}
