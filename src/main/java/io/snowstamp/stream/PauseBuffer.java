package io.snowstamp.stream;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.ArrayDeque;
import java.util.function.LongSupplier;

/**
 * The records a paused task holds back, in arrival order, in the logged {@code pending-records}
 * store (key: a sequence number, big-endian, so the store's order is arrival order). Held-back
 * records commit with the input offsets, so a crash loses none of them: a record taken out (stamped, found in the output,
 * or sent to the dead-letter topic) leaves the store under exactly-once with its output, in one transaction; under
 * at-least-once only once a commit after it flushed the producer ({@link PendingStore} says why and how that is seen),
 * so a restart may find it set aside again, to be found in the output by the at-least-once skip or stamped again (a copy).
 *
 * <p>The numbers held need not be contiguous: under at-least-once a changelog write may expire while later ones land
 * (the producer goes on after a batch timed out), and a task closed dirty and started here again may find the changelog
 * replayed from its last checkpoint over a local store that holds later writes ({@code put 5} acknowledged; {@code put 6},
 * {@code put 7}, {@code delete 5}, {@code delete 6} only local: the store holds 5 and 7). A number missing inside the
 * range is skipped.
 */
final class PauseBuffer {
    private final KeyValueStore<Long, Record<byte[], byte[]>> store;
    /** The task's commits so far (null: exactly-once, a record taken out is deleted at once). */
    private final LongSupplier commits;
    /**
     * Taken out, not yet deleted, oldest first: {the number after the last taken out, the commits when taken out, the
     * producer's flushes then ({@link #UNKNOWN}: not known)}.
     */
    private final ArrayDeque<long[]> taken = new ArrayDeque<>();
    private static final long UNKNOWN = Long.MAX_VALUE;
    /** The flushes of the producer the records taken out were sent with (null: none known). */
    private ProducerFlushes flushes;
    /** The stream thread of the task (the state updater's thread also commits stores: of tasks restoring, of standbys). */
    private final Thread owner = Thread.currentThread();
    /** Run at the end of each commit of the task, until the one after this incarnation closed. */
    private final Runnable committed = this::releaseFlushed;
    /** This incarnation's processor closed: the next commit is its last (a rebalance's, before the task moves). */
    private boolean closing;
    private long deleted;   // the records taken out below this number are deleted: the store holds [deleted, head) until then
    private final long holesBelow;  // a number below this may be missing from the store (restored with gaps)
    private long head;      // next sequence to stamp
    private long tail;      // next sequence to append
    private long count;     // records held: tail - head less the numbers missing inside the range
    private boolean gaps;   // numbers are missing inside the range (only ever from the store restored at the start)

    /** Every record in the store waits: those of a previous incarnation taken out and not yet deleted wait again. */
    PauseBuffer(KeyValueStore<Long, Record<byte[], byte[]>> store) {
        this.store = store;
        this.commits = PendingStore.commitsOf(store);
        try (KeyValueIterator<Long, Record<byte[], byte[]>> all = store.all()) {
            boolean first = true;
            while (all.hasNext()) {
                KeyValue<Long, Record<byte[], byte[]>> entry = all.next();
                if (first) {
                    head = entry.key;
                    first = false;
                }
                tail = entry.key + 1;
                count++;
            }
            if (first) {
                head = 0;
                tail = 0;
            }
        }
        gaps = count < tail - head;
        deleted = head;
        holesBelow = gaps ? tail : head;
        if (commits != null) {
            PendingStore.onCommit(store, null, committed);
        }
    }

    /** No record waits (records taken out may still be in the store, see {@link #awaitsCommit}). */
    boolean isEmpty() {
        return count == 0;
    }

    /** The records that wait. */
    long size() {
        return count;
    }

    /** The number the next record appended gets (numbers grow in arrival order). */
    long nextSequence() {
        return tail;
    }

    /** The number of the oldest record held (equal to {@link #nextSequence} when empty). */
    long headSequence() {
        return head;
    }

    void append(Record<byte[], byte[]> record) {
        release();
        store.put(tail++, record);
        count++;
    }

    /** The oldest record held (null: none). */
    Record<byte[], byte[]> peek() {
        return isEmpty() ? null : store.get(head);
    }

    /** Takes the oldest record out: deleted from the store now (exactly-once) or once a commit passed (at-least-once). */
    void removeHead() {
        if (isEmpty()) {
            return;
        }
        if (commits == null) {
            store.delete(head);
            deleted = head + 1;
        }
        head++;
        count--;
        if (count == 0) {
            head = tail;
            gaps = false;
        } else if (gaps) {
            while (store.get(head) == null) {
                head++;         // a number missing inside the range: the next one held is below tail
            }
        }
        if (commits != null) {
            long now = commits.getAsLong();
            long flushed = flushedNow();
            long[] last = taken.peekLast();
            if (last != null && last[1] == now && last[2] == flushed) {
                last[0] = head;
            } else {
                taken.addLast(new long[] {head, now, flushed});
            }
        }
    }

    /** The flushes of the producer this thread sends with (its output of the record taken out went there); UNKNOWN: none. */
    private long flushedNow() {
        ProducerFlushes now = ProducerFlushes.ofThisThread();
        if (now != flushes) {
            // another producer (or none): what the records taken out so far were sent with no longer answers for them
            taken.forEach(entry -> entry[2] = UNKNOWN);
            flushes = now;
        }
        return now == null ? UNKNOWN : now.flushes();
    }

    /** Records taken out are still in the store, to be deleted once a commit passed. */
    boolean awaitsCommit() {
        return !taken.isEmpty();
    }

    /**
     * Deletes the records taken out before the last commit (their output is durable). Called on the task's stream thread
     * in its processing or a punctuation, never within a commit: a count above the one at a record's taking out means a
     * commit's producer flush since then returned ({@link PendingStore}).
     */
    void release() {
        release(true);
    }

    /** The task's processor closed: the commit that follows (a rebalance's) is this incarnation's last. */
    void closing() {
        closing = true;
    }

    /**
     * At the end of a commit (the last one before the task closes, too): deletes the records taken out whose output the
     * producer's flushes prove durable ({@link ProducerFlushes}); the commit count proves nothing here. The commit after
     * the processor closed (a task moving in a rebalance) is the last: its deletes are flushed before the task is handed
     * over, so that its next owner restores none of them, and the hook is gone before the store serves anything else
     * (a standby made of it, a restore).
     */
    void releaseFlushed() {
        if (Thread.currentThread() != owner) {
            return;
        }
        long before = deleted;
        release(false);
        if (closing) {
            PendingStore.onCommit(store, committed, null);
            if (deleted > before && flushes != null) {
                flushes.flushNow();
            }
        }
    }

    private void release(boolean processing) {
        while (!taken.isEmpty()) {
            long[] oldest = taken.peekFirst();
            boolean durable = processing && oldest[1] < commits.getAsLong()
                    || oldest[2] != UNKNOWN && flushes.durableAfter(oldest[2]);
            if (!durable) {
                return;
            }
            long below = taken.pollFirst()[0];
            for (; deleted < below; deleted++) {
                if (deleted >= holesBelow || store.get(deleted) != null) {      // no tombstone for a number never held
                    store.delete(deleted);
                }
            }
        }
    }
}
