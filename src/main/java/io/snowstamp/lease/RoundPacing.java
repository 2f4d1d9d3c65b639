package io.snowstamp.lease;

import java.time.Duration;
import java.util.Collection;

/**
 * When the lease reader's next round is sent: every {@link #PERIOD}, and right when a new lease's takeover wait ends.
 * Apart from {@link LeaseVerifier} because it is a rule of its own, pure, over times passed in.
 */
final class RoundPacing {
    /** How often the changelog is read back. */
    static final Duration PERIOD = Duration.ofMillis(200);

    private RoundPacing() {
    }

    /**
     * How long to wait before the round after the one sent at {@code send}: the rest of {@link #PERIOD}, or less
     * when a new lease's takeover wait ends sooner ({@code due}), so that the confirmation that ends it is sent
     * then and not up to a period later. A due time the last round was already sent after (its partition was not
     * read in time) gets the period: no rounds back to back.
     */
    static long pause(long send, long now, long due) {
        long rest = PERIOD.toNanos() - (now - send);
        if (due != Long.MAX_VALUE && due - send > 0 && due - now < rest) {
            rest = due - now;
        }
        return rest;
    }

    /** The soonest {@link PartitionLease#takeoverDue} of {@code leases} ({@link Long#MAX_VALUE}: none). */
    static long earliestTakeoverDue(Collection<PartitionLease> leases) {
        long earliest = Long.MAX_VALUE;
        for (PartitionLease lease : leases) {
            long due = lease.takeoverDue();
            if (due != Long.MAX_VALUE && (earliest == Long.MAX_VALUE || due - earliest < 0)) {
                earliest = due;
            }
        }
        return earliest;
    }
}
