package io.snowstamp.sequence;

import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.ownership.ReadPastAcks;
import io.snowstamp.ownership.WriteAcks;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;

/**
 * One sequence task's acknowledged segments: per tag, the highest {@code maxId} the changelog acknowledged
 * ({@code acks=all}) for this task and a round confirming its lease read past ({@link ReadPastAcks}), or restored from the
 * changelog. No number above it leaves the task ({@link #await}): a number of a new segment waits until the segment's
 * reservation lies in the log before any newer lease record, where a new owner reads it, so that owner resumes above it
 * however the old one was stopped (design.md, "The ownership lease"). Under exactly-once and in TopologyTestDriver
 * every write counts as made when it is sent ({@link WriteAcks#immediate()}).
 *
 * <p>Thread-safety: the runnables {@link #onSend} returns run on the producer's I/O thread; everything else on the
 * task's stream thread.
 */
final class SegmentAcks implements WriteAcks.Listener {
    private static final SequenceStateSerde STATES = new SequenceStateSerde();

    private final WriteAcks acks;
    private final int partition;
    private final Map<String, ReadPastAcks> acked = new ConcurrentHashMap<>();
    // stream thread
    private long waits;
    private long waitedNanos;

    SegmentAcks(WriteAcks acks, int partition) {
        this.acks = acks;
        this.partition = partition;
        acks.register(partition, this);
    }

    /** A task (re)starts: the acknowledgements of its previous incarnation ({@code previous}, null: none) end here. */
    static SegmentAcks reopen(SegmentAcks previous, WriteAcks acks, int partition) {
        if (previous != null) {
            previous.close();
        }
        return new SegmentAcks(acks, partition);
    }

    /** The task closes: later acknowledgements are no longer this task's. */
    void close() {
        acks.unregister(partition, this);
    }

    /**
     * A counter of {@code tag} opens on its stored segment up to {@code maxId}: whether that segment is in the log, so that
     * its numbers may leave at once (then recorded so). A segment the counter resumes inside of (at-least-once, after a
     * trusted marker) is in the log where the lease reader read a record of the tag covering it before this task's lease
     * record: the store can hold what the changelog never took when Kafka Streams initializes the same task again
     * without a restore (a suspended task resumed on this instance) or restores it over a store it kept (a dirty close
     * under at-least-once, started here again), and a reservation whose write expired unseen would then be numbered in.
     * False: the caller writes the segment again, and its numbers wait for that write ({@link #await}).
     */
    boolean opened(String tag, long maxId, boolean inside, LeaseGuard lease) {
        if (inside && !acks.isImmediate() && lease.reads() && maxId > lease.coveredCounters().getOrDefault(tag, -1L)) {
            return false;
        }
        raise(tag, maxId);
        return true;
    }

    /** {@code maxId} of {@code tag} was just written to the store (counts as acknowledged at once where acks are immediate). */
    void written(String tag, long maxId) {
        if (acks.isImmediate()) {
            raise(tag, maxId);
        }
    }

    @Override
    public LongConsumer onSend(byte[] key, byte[] value) {
        if (key == null) {
            return null;
        }
        String tag = new String(key, StandardCharsets.UTF_8);
        if (SequenceState.CHECKPOINT_KEY.equals(tag) || !(STATES.deserialize(null, value) instanceof TagSegment segment)) {
            return null;
        }
        ReadPastAcks tagAcked = tag(tag);
        long maxId = segment.maxId();
        return offset -> tagAcked.acknowledged(maxId, offset);
    }

    /**
     * Returns once {@code number} of {@code tag} is at or below a covering {@code maxId} (bounded:
     * {@link io.snowstamp.ownership.AckWait}).
     *
     * @return the acknowledged {@code maxId} of the tag (at least {@code number})
     * @throws org.apache.kafka.streams.errors.TaskMigratedException when no acknowledgement came in time: the number is
     *                                                               dropped and the partition goes back to the group
     */
    long await(String tag, long number, LeaseGuard lease) {
        ReadPastAcks tagAcked = tag(tag);
        if (!tagAcked.covers(number, lease)) {
            waits++;
            waitedNanos += tagAcked.await(number, lease, "sequence partition " + partition,
                    "the segment of tag '" + tag + "' up to " + number + " or more", "number " + number + " of tag '" + tag + "'");
        }
        return tagAcked.covered(lease);
    }

    /** How many numbers waited for their segment's acknowledgement. */
    long waits() {
        return waits;
    }

    long waitedNanos() {
        return waitedNanos;
    }

    private void raise(String tag, long maxId) {
        tag(tag).inLog(maxId);
    }

    private ReadPastAcks tag(String tag) {
        return acked.computeIfAbsent(tag, t -> new ReadPastAcks());
    }
}
