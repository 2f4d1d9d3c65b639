package io.snowstamp.lease;

/**
 * Reads the lease out of one record of a changelog topic. Each mode writes its lease in its own store
 * (the worker state, the sequence checkpoint), so each supplies its codec.
 */
@FunctionalInterface
public interface LeaseCodec {
    /**
     * The lease the record names, or null when the record names none (another key of the store). A record whose
     * value cannot be read throws: a changelog the stamper cannot understand proves nothing.
     */
    LeaseMark read(byte[] key, byte[] value);

    /**
     * The highest ID the record proves may have been issued (-1: none, or this store does not say). A new owner resumes
     * above the highest of these in the whole partition, not only above the newest value its restore kept.
     */
    default long covered(byte[] key, byte[] value) {
        return -1;
    }

    /**
     * Which of the store's counters {@link #covered} bounds: null for the partition's one counter (the worker state), the
     * counter's key for a store of many (a sequence tag). A new owner resumes each such counter above the highest covered
     * of it in the records before its own lease record ({@link PartitionLease#coveredCounters}).
     */
    default String counter(byte[] key, byte[] value) {
        return null;
    }

    /**
     * Who wrote a counter's record, {@link LeaseMark#writer} of its lease (-1: this store does not say). A counter's record
     * after the task's own lease record by another writer is another holder's late write
     * ({@link PartitionLease#takeLateCounters}).
     */
    default long writer(byte[] key, byte[] value) {
        return -1;
    }
}
