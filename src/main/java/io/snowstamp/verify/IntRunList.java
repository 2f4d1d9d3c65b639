package io.snowstamp.verify;

/**
 * An append-only list of ints stored as runs of equal values: each run is one long, its first
 * index in the high half and its value in the low half.
 *
 * <p>Made for the source partition of each output record, which is nearly always the same for a
 * whole output partition: a million entries of one value take 8 bytes, and a list whose value
 * changes at every entry takes 8 bytes an entry, as a plain list of longs would. Read it in index
 * order with a {@link Reader}. Not thread-safe.
 */
final class IntRunList {

    private final LongList runs = new LongList();
    private int size;
    private int last;

    void add(int value) {
        if (size == 0 || value != last) {
            runs.add((long) size << 32 | (value & 0xFFFF_FFFFL));
            last = value;
        }
        size++;
    }

    int size() {
        return size;
    }

    Reader reader() {
        return new Reader();
    }

    /** Reads the values from index 0 up, one {@link #next()} per entry. */
    final class Reader {
        private int position;
        private int run = -1;
        private int nextRunStart;
        private int value;

        int next() {
            if (position >= size) {
                throw new IndexOutOfBoundsException("index " + position + ", size " + size);
            }
            if (position == nextRunStart) {
                run++;
                value = (int) runs.get(run);
                nextRunStart = run + 1 < runs.size() ? (int) (runs.get(run + 1) >>> 32) : size;
            }
            position++;
            return value;
        }
    }
}
