package io.snowstamp.lease;

/**
 * What the verifier does to a lease, for a model that plays the verifier itself (the model test of two owners):
 * the record-by-record read and the confirmation of a round, as {@link LeaseVerifier} calls them.
 */
public final class LeaseRounds {
    private LeaseRounds() {
    }

    public static void observe(PartitionLease lease, long offset, LeaseMark mark, long covered) {
        lease.observe(offset, mark, covered);
    }

    public static void confirmed(PartitionLease lease, long sendNanos, long receivedNanos) {
        lease.confirmed(sendNanos, receivedNanos);
    }

    public static long highestEpoch(PartitionLease lease) {
        return lease.highestEpoch();
    }

    public static final long TERM_NANOS = LeaseVerifier.TERM.toNanos();
    public static final long TAKEOVER_WAIT_NANOS = LeaseVerifier.TAKEOVER_WAIT_NANOS;
}
