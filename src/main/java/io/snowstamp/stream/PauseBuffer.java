package io.snowstamp.stream;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The records a paused task holds back, in arrival order, in the logged {@code pending-records}
 * store (key: a sequence number, big-endian, so the store's order is arrival order). Held-back
 * records commit with the input offsets, so a crash loses none of them.
 */
final class PauseBuffer {
    private final KeyValueStore<Long, Record<byte[], byte[]>> store;
    private long head;      // next sequence to stamp
    private long tail;      // next sequence to append

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
            }
            if (first) {
                head = 0;
                tail = 0;
            }
        }
    }

    boolean isEmpty() {
        return head == tail;
    }

    long size() {
        return tail - head;
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
    }

    Record<byte[], byte[]> peek() {
        return store.get(head);
    }

    void removeHead() {
        store.delete(head++);
    }
}
