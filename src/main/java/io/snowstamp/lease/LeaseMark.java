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
     * (0: no lease). Two holders that took the same epoch (one of them loses the lease at its first check) differ.
     */
    public long writer() {
        return (epoch << 32) | (holder.hashCode() & 0xffffffffL);
    }

    @Override
    public String toString() {
        return "epoch " + epoch + " held by " + (holder.isEmpty() ? "nobody" : holder);
    }
}
