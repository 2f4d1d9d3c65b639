package io.snowstamp.stream;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The flushes of an at-least-once stream thread's producer and whether a send failed between them, as the thread's tasks
 * see them: a record whose output was sent after flush {@code n} returned is durable once a later flush returned with no
 * send of the producer failing since flush {@code n} ({@link #durableAfter}). {@link PauseBuffer} deletes a record set
 * aside on that proof at the end of a commit (the last one before a task closes, too), where the proof by commit counts
 * ({@link PendingStore}) holds only in the task's processing.
 *
 * <p>WHY a flush proves it: the producer's {@code flush} returns once every record sent before it completed, and it runs
 * each record's callback (where {@link #failed} is told) before it counts the record complete. Kafka Streams' thread
 * producer is used by its stream thread alone, so no send comes between a flush's start and its return.
 *
 * <p>The producer tells this object of its sends, failures and flushes; a task finds the object of the producer its stream
 * thread sent with last ({@link #ofThisThread}), a thread-local, since the producer is made on another thread than the one
 * that uses it.
 */
public final class ProducerFlushes {
    private static final ThreadLocal<ProducerFlushes> SENDING = new ThreadLocal<>();

    /** Sends that failed so far: told on the producer's I/O thread (or on the stream thread, a send that threw). */
    private final AtomicLong failures = new AtomicLong();
    /** Flushes that returned; the stream thread's alone, as are the two below. */
    private long flushes;
    /** {@link #failures} as the last flush returned. */
    private long failuresAtFlush;
    /** The newest flush before whose return, and after the one before it, a send failed (0: none). */
    private long lastFailed;
    /** The producer's flush (which tells {@link #flushed}). */
    private final Runnable flush;

    /** @param flush the producer's flush, which then tells {@link #flushed} */
    public ProducerFlushes(Runnable flush) {
        this.flush = flush;
    }

    /**
     * A send on the calling thread: its tasks find this producer's flushes from now on. A thread-local read per send, not a
     * field remembering the thread: were two producers to alternate on one thread, the one that sent last must answer.
     */
    public void sending() {
        if (SENDING.get() != this) {
            SENDING.set(this);
        }
    }

    /** A send failed (its callback got an error, or the send threw). */
    public void failed() {
        failures.incrementAndGet();
    }

    /** The producer's flush returned: every record sent before it completed, and each failure among them was told. */
    public void flushed() {
        flushes++;
        long now = failures.get();
        if (now != failuresAtFlush) {
            failuresAtFlush = now;
            lastFailed = flushes;
        }
    }

    /** Flushes the producer now, on its stream thread (the deletes of a task about to move, before it moves). */
    void flushNow() {
        flush.run();
    }

    /** The flushes of the producer the calling thread sent with last; null when none told it of a send. */
    public static ProducerFlushes ofThisThread() {
        return SENDING.get();
    }

    /** The flushes that returned so far. */
    public long flushes() {
        return flushes;
    }

    /**
     * Whether every record sent after flush {@code flush} returned (and before the last flush) is durable: a flush came
     * after it and no send failed since flush {@code flush} returned.
     */
    public boolean durableAfter(long flush) {
        return flushes > flush && lastFailed <= flush;
    }
}
