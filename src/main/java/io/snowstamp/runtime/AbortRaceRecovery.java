package io.snowstamp.runtime;

import org.apache.kafka.common.errors.InvalidTxnStateException;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.LongSupplier;

/**
 * Decides whether a stream thread that died of {@link InvalidTxnStateException} is replaced
 * (Kafka Streams' {@code REPLACE_THREAD}) instead of stopping the stamper.
 *
 * <p>Kafka 4.3 with transactions v2 (KIP-890): when the transaction coordinator aborts an open
 * transaction on its own ({@code transaction.timeout.ms} passed, e.g. while the commit was stuck on a
 * frozen or failing broker and the coordinator moved), the abort bumps the producer epoch, and the
 * commit that arrives afterwards is answered {@code INVALID_TXN_STATE} ("state is COMPLETE_ABORT, but
 * received transaction marker result to send: COMMIT" in the coordinator's log). The producer treats
 * that as fatal and the stream thread dies, though the transaction was rolled back and nothing of it
 * became visible (KAFKA-20785; later brokers answer {@code PRODUCER_FENCED}, which Kafka Streams handles
 * by rejoining the group). Seen in {@code ClusterFaultIT} when the transaction coordinator's node is
 * frozen for 20 s.
 *
 * <p>Replacing the thread is what the fenced answer would have led to: the new thread's producer
 * fences the old transactional id, its tasks start anew (lease, state restored from the changelog,
 * tail guard), so no ID is issued twice. A stamper that keeps dying of it is not kept alive: after
 * {@link #LIMIT} replacements within {@link #WINDOW_MILLIS} the error stops the stamper as any other.
 * Thread-safe.
 */
final class AbortRaceRecovery {
    static final int LIMIT = 5;
    static final long WINDOW_MILLIS = 600_000;

    private final LongSupplier monotonicMillis;
    private final Deque<Long> replacements = new ArrayDeque<>();

    AbortRaceRecovery(LongSupplier monotonicMillis) {
        this.monotonicMillis = monotonicMillis;
    }

    /** True (and counted) when {@code error} is the abort race and the limit allows one more replacement. */
    synchronized boolean replace(Throwable error) {
        if (!isAbortRace(error)) {
            return false;
        }
        long now = monotonicMillis.getAsLong();
        while (!replacements.isEmpty() && now - replacements.peekFirst() >= WINDOW_MILLIS) {
            replacements.removeFirst();
        }
        if (replacements.size() >= LIMIT) {
            return false;
        }
        replacements.addLast(now);
        return true;
    }

    /** Whether {@code error} or one of its causes is an {@link InvalidTxnStateException}. */
    static boolean isAbortRace(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof InvalidTxnStateException) {
                return true;
            }
        }
        return false;
    }
}
