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

    /** A record that proves numbers of {@code counter} (a sequence tag) up to {@code covered} may have been issued. */
    public static void observe(PartitionLease lease, long offset, LeaseMark mark, long covered, String counter) {
        lease.observe(offset, mark, covered, counter);
    }

    /** A counter's record written under lease epoch {@code writer}. */
    public static void observe(PartitionLease lease, long offset, LeaseMark mark, long covered, String counter, long writer) {
        lease.observe(offset, mark, covered, counter, writer);
    }

    /** A round that read the partition up to {@code end} (exclusive). */
    public static void confirmed(PartitionLease lease, long sendNanos, long receivedNanos, long end) {
        lease.confirmed(sendNanos, receivedNanos, end);
    }

    /** A round that read every write of the partition made so far (a model without offsets). */
    public static void confirmed(PartitionLease lease, long sendNanos, long receivedNanos) {
        lease.confirmed(sendNanos, receivedNanos, Long.MAX_VALUE);
    }

    /** A lease of {@code partition} whose own record the verifier has read back at {@code offset} (no restore check). */
    public static PartitionLease readBack(int partition, LeaseMark mine, long offset) {
        PartitionLease lease = new PartitionLease(partition, mine, PartitionLease.NO_RESTORE_CHECK, TERM_NANOS, TAKEOVER_WAIT_NANOS);
        lease.observe(offset, mine);
        return lease;
    }

    public static long highestEpoch(PartitionLease lease) {
        return lease.highestEpoch();
    }

    public static final long TERM_NANOS = LeaseVerifier.TERM.toNanos();
    public static final long TAKEOVER_WAIT_NANOS = LeaseVerifier.TAKEOVER_WAIT_NANOS;
}
