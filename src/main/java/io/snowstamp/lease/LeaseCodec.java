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
}
