package io.snowstamp.verify;

import java.util.Arrays;

/**
 * An append-only list of primitive longs stored in fixed-size chunks.
 *
 * <p>Growing never copies more than the first, small chunk, so ten million entries take 80 MB of
 * heap rather than the up to 3x a doubling array needs while it grows; a list that stays short
 * (a partition with a handful of records) takes a few hundred bytes, not a whole chunk.
 * Not thread-safe.
 */
final class LongList {

    /**
     * 32 Ki longs, 256 KiB: well under half of G1's smallest region (1 MiB), so chunks are ordinary
     * objects; a chunk of half a region or more is "humongous" and takes a whole region or more,
     * which nearly doubles the heap a list of 512 KiB chunks needs.
     */
    private static final int SHIFT = 15;
    private static final int CHUNK = 1 << SHIFT;
    private static final int MASK = CHUNK - 1;
    private static final int FIRST_CAPACITY = 16;

    private long[][] chunks = new long[4][];
    private int size;

    void add(long value) {
        if (size == Integer.MAX_VALUE) {
            throw new IllegalStateException("more than " + Integer.MAX_VALUE + " entries in one list");
        }
        int c = size >>> SHIFT;
        int i = size & MASK;
        if (c == chunks.length) {
            chunks = Arrays.copyOf(chunks, c * 2);
        }
        long[] chunk = chunks[c];
        if (chunk == null) {
            chunk = new long[c == 0 ? FIRST_CAPACITY : CHUNK];
            chunks[c] = chunk;
        } else if (i == chunk.length) {
            // only the first chunk starts small and doubles up to the chunk size
            chunk = Arrays.copyOf(chunk, Math.min(CHUNK, chunk.length * 2));
            chunks[c] = chunk;
        }
        chunk[i] = value;
        size++;
    }

    long get(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + ", size " + size);
        }
        return chunks[index >>> SHIFT][index & MASK];
    }

    int size() {
        return size;
    }
}
