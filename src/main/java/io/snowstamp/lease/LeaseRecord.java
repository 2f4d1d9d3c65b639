package io.snowstamp.lease;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What one changelog record says to the lease reader, read through its topic's {@link LeaseCodec} once: the lease it
 * names, what it covers, whose counter and by which writer. A record this build cannot read (a newer build's format)
 * names nothing, and {@link #unreadable} says why: the reader counts it as another writer's, and after a task's own lease
 * record as the newer holder's ({@link PartitionLease#unreadable}).
 *
 * @param mark       the lease named (null: none)
 * @param covered    {@link LeaseCodec#covered} (-1: none)
 * @param counter    {@link LeaseCodec#counter} (null: the partition's one counter)
 * @param writer     {@link LeaseCodec#writer} (-1: not known)
 * @param unreadable why the record cannot be read (null: it can)
 */
record LeaseRecord(LeaseMark mark, long covered, String counter, long writer, String unreadable) {
    static LeaseRecord read(LeaseCodec codec, ConsumerRecord<byte[], byte[]> record) {
        byte[] key = record.key();
        byte[] value = record.value();
        try {
            return new LeaseRecord(codec.read(key, value), codec.covered(key, value), codec.counter(key, value),
                    codec.writer(key, value), null);
        } catch (RuntimeException e) {
            return new LeaseRecord(null, -1, null, -1, String.valueOf(e.getMessage()));
        }
    }
}
