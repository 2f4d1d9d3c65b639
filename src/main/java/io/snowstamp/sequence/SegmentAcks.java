package io.snowstamp.sequence;

import io.snowstamp.lease.Ticker;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.stream.AckWait;
import io.snowstamp.stream.WriteAcks;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One sequence task's acknowledged segments: per tag, the highest {@code maxId} the changelog acknowledged
 * ({@code acks=all}) for this task, or restored from it. No number above it leaves the task ({@link #await}): a number
 * of a new segment waits until the segment's reservation is in the log that a new owner's last lease read sees, so that
 * owner resumes above it however the old one was stopped (design.md, "The ownership lease"). Under exactly-once and in
 * TopologyTestDriver every write counts as acknowledged when made ({@link WriteAcks#immediate()}).
 *
 * <p>Thread-safety: the runnables {@link #onSend} returns run on the producer's I/O thread; everything else on the
 * task's stream thread.
 */
final class SegmentAcks implements WriteAcks.Listener {
    private static final SequenceStateSerde STATES = new SequenceStateSerde();

    private final WriteAcks acks;
    private final int partition;
    private final Map<String, AtomicLong> acked = new ConcurrentHashMap<>();
    // stream thread
    private long waits;
    private long waitedNanos;

    SegmentAcks(WriteAcks acks, int partition) {
        this.acks = acks;
        this.partition = partition;
        acks.register(partition, this);
    }

    /** The task closes: later acknowledgements are no longer this task's. */
    void close() {
        acks.unregister(partition, this);
    }

    /** {@code maxId} of {@code tag} is in the log already: restored from the changelog. */
    void restored(String tag, long maxId) {
        raise(tag, maxId);
    }

    /** {@code maxId} of {@code tag} was just written to the store (counts as acknowledged at once where acks are immediate). */
    void written(String tag, long maxId) {
        if (acks.isImmediate()) {
            raise(tag, maxId);
        }
    }

    @Override
    public Runnable onSend(byte[] key, byte[] value) {
        if (key == null) {
            return null;
        }
        String tag = new String(key, StandardCharsets.UTF_8);
        if (SequenceState.CHECKPOINT_KEY.equals(tag) || !(STATES.deserialize(null, value) instanceof TagSegment segment)) {
            return null;
        }
        AtomicLong tagAcked = acked.computeIfAbsent(tag, t -> new AtomicLong(-1));
        long maxId = segment.maxId();
        return () -> tagAcked.accumulateAndGet(maxId, Math::max);
    }

    /**
     * Returns once {@code number} of {@code tag} is at or below an acknowledged {@code maxId} (bounded: {@link AckWait}).
     *
     * @return the acknowledged {@code maxId} of the tag (at least {@code number})
     * @throws org.apache.kafka.streams.errors.TaskMigratedException when no acknowledgement came in time: the number is
     *                                                               dropped and the partition goes back to the group
     */
    long await(String tag, long number, Ticker ticker) {
        AtomicLong tagAcked = acked.computeIfAbsent(tag, t -> new AtomicLong(-1));
        if (tagAcked.get() < number) {
            waits++;
            waitedNanos += AckWait.await(tagAcked::get, number, ticker, "sequence partition " + partition,
                    "the segment of tag '" + tag + "' up to " + number + " or more", "number " + number + " of tag '" + tag + "'");
        }
        return tagAcked.get();
    }

    /** How many numbers waited for their segment's acknowledgement. */
    long waits() {
        return waits;
    }

    long waitedNanos() {
        return waitedNanos;
    }

    private void raise(String tag, long maxId) {
        acked.computeIfAbsent(tag, t -> new AtomicLong(-1)).accumulateAndGet(maxId, Math::max);
    }
}
