package io.snowstamp.stream;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The records a paused task holds back, in arrival order, in the logged {@code pending-records}
 * store (key: a sequence number, big-endian, so the store's order is arrival order). Held-back
 * records commit with the input offsets, so a crash loses none of them.
 *
 * <p>The numbers held need not be contiguous: under at-least-once a changelog write may expire while later ones land
 * (the producer goes on after a batch timed out), and a task closed dirty and started here again may find the changelog
 * replayed from its last checkpoint over a local store that holds later writes ({@code put 5} acknowledged; {@code put 6},
 * {@code put 7}, {@code delete 5}, {@code delete 6} only local: the store holds 5 and 7). A number missing inside the
 * range is skipped.
 */
final class PauseBuffer {
    private final KeyValueStore<Long, Record<byte[], byte[]>> store;
    private long head;      // next sequence to stamp
    private long tail;      // next sequence to append
    private long count;     // records held: tail - head less the numbers missing inside the range
    private boolean gaps;   // numbers are missing inside the range (only ever from the store restored at the start)

    PauseBuffer(KeyValueStore<Long, Record<byte[], byte[]>> store) {
        this.store = store;
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
    }

    boolean isEmpty() {
        return count == 0;
    }

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
        store.put(tail++, record);
        count++;
    }

    /** The oldest record held (null: none). */
    Record<byte[], byte[]> peek() {
        return isEmpty() ? null : store.get(head);
    }

    void removeHead() {
        if (isEmpty()) {
            return;
        }
        store.delete(head++);
        count--;
        if (count == 0) {
            head = tail;
            gaps = false;
        } else if (gaps) {
            while (store.get(head) == null) {
                head++;         // a number missing inside the range: the next one held is below tail
            }
        }
    }
}
