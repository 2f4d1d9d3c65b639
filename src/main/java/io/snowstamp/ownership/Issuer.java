package io.snowstamp.ownership;

import io.snowstamp.id.IdGenerator;
import io.snowstamp.lease.LeaseGuard;

/**
 * Takes one ID for a task, under its lease and its write-ahead reservations, in the only order that keeps two owners'
 * IDs apart (design.md, "The ownership lease"):
 *
 * <ol>
 *   <li>the lease check before the ID (waits out a new lease's takeover; the first pass resumes the generator above
 *       every ID the changelog's records prove may have been issued, {@link LeaseGuard#highestCovered});</li>
 *   <li>the generator's next ID;</li>
 *   <li>an acknowledged reservation that covers it ({@link WriteAhead#awaitCovered});</li>
 *   <li>the lease check again ({@link LeaseGuard#checkIssued}): the ID leaves only if the lease still holds after the
 *       clock was read and the reservation acknowledged — a pause anywhere in between drops it.</li>
 * </ol>
 *
 * <p>Used by one stream thread.
 */
public final class Issuer {

    /** The points between the steps, where a fault test may stop the process ({@link FreezeHook}). */
    public enum Step { BEFORE_CHECK, CHECKED, TAKEN, COVERED }

    /** Told at each {@link Step} of each ID. */
    @FunctionalInterface
    public interface Steps {
        Steps NONE = step -> { };

        void at(Step step);
    }

    private final LeaseGuard lease;
    private final IdGenerator generator;
    private final WriteAhead ahead;
    private final Steps steps;
    private final boolean resumeAboveCovered;
    /** The first ID under the lease has been taken (the generator resumed above {@link LeaseGuard#highestCovered}). */
    private boolean resumed;

    public Issuer(LeaseGuard lease, IdGenerator generator, WriteAhead ahead, Steps steps) {
        this(lease, generator, ahead, steps, true);
    }

    /**
     * @param resumeAboveCovered resume the first ID above what the lease's read of the changelog proves another writer
     *                           may have issued (false only where the committed output tail decides a resume: under
     *                           exactly-once with the tail guard, a fenced owner's reservations cover nothing committed)
     */
    public Issuer(LeaseGuard lease, IdGenerator generator, WriteAhead ahead, Steps steps, boolean resumeAboveCovered) {
        this.lease = lease;
        this.generator = generator;
        this.ahead = ahead;
        this.steps = steps;
        this.resumeAboveCovered = resumeAboveCovered;
    }

    /**
     * Whether {@link #issue} would wait now for the lease (a takeover, a confirmation) or for the reservation of the next ID's
     * time unit. Never waits: the caller sets its record aside and asks again, and its thread stamps
     * the other tasks meanwhile.
     *
     * @param waitingSince when the task's input started waiting ({@link LeaseGuard#ticker} nanos; -1: not yet)
     * @throws org.apache.kafka.streams.errors.TaskMigratedException once a wait outlasted its bound, as {@link #issue} would
     */
    public Wait mustWait(long waitingSince) {
        if (lease.mustWait(waitingSince)) {
            return Wait.LEASE;
        }
        if (resumeAboveCovered && !resumed) {
            // the first ID resumes above what another writer may have issued (issue): the reservation to wait for is
            // that ID's, which can lie above the clock's, so that issue does not wait for it on the thread
            generator.resumeAbove(lease.highestCovered());
        }
        return ahead.mustWait(generator.nextTime(), waitingSince) ? Wait.RESERVATION : Wait.NONE;
    }

    /** What the next ID would wait for ({@link #mustWait}). */
    public enum Wait { NONE, LEASE, RESERVATION }

    /**
     * The next ID, which may leave the task now.
     *
     * @throws org.apache.kafka.streams.errors.TaskMigratedException when the lease is lost or lapsed, or no reservation
     *         was acknowledged in time (nothing is issued)
     */
    public long issue() {
        steps.at(Step.BEFORE_CHECK);
        if (lease.check() && resumeAboveCovered) {
            // the first ID under this lease: the round that permitted it read the changelog to its committed end after the
            // previous owner's last term, so it saw every reservation that owner can still issue under
            generator.resumeAbove(lease.highestCovered());
            resumed = true;
        }
        steps.at(Step.CHECKED);
        long id = generator.next();
        steps.at(Step.TAKEN);
        ahead.awaitCovered(id, generator.lastTime());
        steps.at(Step.COVERED);
        lease.checkIssued();
        ahead.renew(generator.lastTime());
        return id;
    }
}
