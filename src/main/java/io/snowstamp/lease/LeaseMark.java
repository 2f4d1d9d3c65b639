package io.snowstamp.lease;

import java.util.Objects;

/**
 * The lease a changelog record names: the epoch (bumped at every task start) and the holder
 * ({@code instance-id#nonce/stream-thread}) of the task that wrote it.
 */
public record LeaseMark(long epoch, String holder) {
    public LeaseMark {
        Objects.requireNonNull(holder, "holder");
    }

    /**
     * This lease as the writer a store record names: the epoch in the high 32 bits, a hash of the holder in the low 32
     * (0: no lease). Two holders that took the same epoch (one of them loses the lease at its first check) differ. The
     * epoch keeps its low 31 bits, so that the writer is never negative (a store refuses a negative one): an epoch grows
     * by one at a task start, and 2^31 of them on one partition is out of reach.
     */
    public long writer() {
        return ((epoch & 0x7fffffffL) << 32) | (holder.hashCode() & 0xffffffffL);
    }

    /** The epoch part of a {@link #writer} (0: an unknown writer, from a state of an earlier format). */
    public static long epochOf(long writer) {
        return writer >>> 32;
    }

    @Override
    public String toString() {
        return "epoch " + epoch + " held by " + (holder.isEmpty() ? "nobody" : holder);
    }
}
