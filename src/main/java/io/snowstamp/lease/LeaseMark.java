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

    @Override
    public String toString() {
        return "epoch " + epoch + " held by " + (holder.isEmpty() ? "nobody" : holder);
    }
}
