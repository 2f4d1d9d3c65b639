package io.snowstamp.ownership;

import java.util.function.LongSupplier;

/**
 * A snowflake task's last ID, written to its state by the thread's {@link PreCommitHooks} right before the commits that
 * need it (every commit, or only a clean stop's where a complete output tail decides a resume). The task tells it when
 * it issued; an idle task adds nothing to the changelog, a closed one writes nothing. One per task incarnation, on its
 * stream thread.
 */
public final class LastIdWrite implements PreCommitHooks.Hook {
    private final PreCommitHooks hooks;
    /** Wall-clock punctuations of the task, for the thread's {@link PreCommitHooks} sentinel. */
    private final PreCommitHooks.Scheduler punctuations;
    private final TaskState state;
    private final LongSupplier lastIssued;
    /** Waiting in {@link PreCommitHooks} to be written. */
    private boolean pending;
    private boolean closed;

    /** @param lastIssued the task's last ID issued (-1: none) */
    public LastIdWrite(PreCommitHooks hooks, PreCommitHooks.Scheduler punctuations, TaskState state, LongSupplier lastIssued) {
        this.hooks = hooks;
        this.punctuations = punctuations;
        this.state = state;
        this.lastIssued = lastIssued;
    }

    /** The task issued an ID (or inherited one its state does not name): the next commit that needs it writes it. */
    public void issued() {
        if (!pending) {
            pending = true;
            hooks.pending(this, punctuations);
        }
    }

    /** This task keeps the thread's stop check covered (a task start follows a rebalance, which may have closed its holder). */
    public void cover() {
        hooks.cover(this, punctuations);
    }

    @Override
    public void write() {
        pending = false;
        if (!closed) {
            state.recordLastId(lastIssued.getAsLong());
        }
    }

    @Override
    public boolean settled() {
        if (closed || lastIssued.getAsLong() <= state.state().lastId()) {
            pending = false;
            return true;
        }
        return false;
    }

    /** The task closes: nothing more is written. */
    public void close() {
        closed = true;
        hooks.closed(this);
        pending = false;
    }
}
