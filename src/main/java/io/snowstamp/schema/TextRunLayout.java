package io.snowstamp.schema;

import io.snowstamp.id.CachedClock;

import java.util.function.LongSupplier;

/**
 * A long run of Avro text fields checked against the layout of an earlier value of its schema: where every length byte
 * sits where it sat then and says what it said then, the run is whole, proved by loads independent of each other (the
 * processor issues them together) instead of a walk where each field's place waits for the field before it. Values of
 * one schema often repeat their layout (codes, identifiers, timestamps and amounts written as text, padded fields);
 * where they do not, the walk is the check, and a layout is noted again only after a pause (1 ms, doubled at each layout
 * that did not hold, up to a second), so that text of varying length pays next to nothing for it.
 *
 * <p>Shared by the stream threads through the schema cache, unsynchronised on purpose: a layout is immutable and
 * published whole (final fields); the rest only chooses when to try. Whatever a thread sees, the check is exact: a
 * layout counts only where the value's own bytes agree with every length in it, and lengths of one byte (0 to 63)
 * taking each field to exactly where the next one was noted is the walk's own rule.
 *
 * <p>Measured ({@code AvroCheckBenchmark}, 207 text fields): a repeated layout 542 → 223 ns hot, 873 → 567 ns from
 * memory; text of varying lengths 532 → 572 ns hot, 891 → 900 from memory (the walk's loop compiles slower beside the
 * layout's code, ~0.2 ns a field; moving the try, or writing nothing per value, did not change that).
 */
final class TextRunLayout {
    /** Runs shorter than this are walked: too few fields to repay the layout. */
    static final int FROM_FIELDS = 8;
    private static final long LONGEST_PAUSE_MS = 1024;

    private final int count;
    private final LongSupplier clock;
    /** the last layout noted, null while none is to be tried */
    private Layout layout;
    /** when ({@link #clock}) a value's layout may be noted again, and the pause after the next layout that does not hold */
    private long noteFrom;
    private long pause = 1;

    TextRunLayout(int count) {
        this(count, CachedClock::millis);
    }

    TextRunLayout(int count, LongSupplier clock) {
        this.count = count;
        this.clock = clock;
    }

    /**
     * The position after the run at {@code pos} when it has the noted layout; -1 when it does not, or none is noted
     * (then this value's layout is noted if the pause is over): the caller walks it.
     */
    int matched(byte[] b, int pos) {
        Layout known = layout;
        if (known == null) {
            return -1;
        }
        int[] at = known.at;
        byte[] lengths = known.lengths;
        if (known.bytes > b.length - pos) {
            missed();
            return -1;
        }
        int differs = 0;
        for (int i = 0; i < at.length; i++) {
            differs |= b[pos + at[i]] ^ lengths[i];
        }
        if (differs != 0) {
            missed();
            return -1;
        }
        if (pause != 1) {
            pause = 1;
        }
        return pos + known.bytes;
    }

    /** After a walk of the run at {@code pos} (a whole run): its layout noted if none is and the pause is over. */
    void walked(byte[] b, int pos) {
        if (layout == null && clock.getAsLong() >= noteFrom) {
            note(b, pos);
        }
    }

    /** Whether a layout is noted (tests). */
    boolean noted() {
        return layout != null;
    }

    /** Notes the layout of the run at {@code pos} when every length in it takes one byte. */
    private void note(byte[] b, int pos) {
        int start = pos;
        int[] at = new int[count];
        byte[] lengths = new byte[count];
        int n = 0;
        while (n < count && pos < b.length && (b[pos] & 0x81) == 0) {
            at[n] = pos - start;
            lengths[n] = b[pos];
            pos += 1 + (b[pos] >>> 1);
            n++;
        }
        // a run cut off in this value still notes a layout Avro could write: each value's size is checked against it
        if (n == count) {
            layout = new Layout(at, lengths, pos - start);
        } else {
            missed();
        }
    }

    private void missed() {
        layout = null;
        noteFrom = clock.getAsLong() + pause;
        pause = Math.min(LONGEST_PAUSE_MS, pause * 2);
    }

    /** Where each length byte of the run sits (from the run's start), what it says, and the run's size. */
    private static final class Layout {
        final int[] at;
        final byte[] lengths;
        final int bytes;

        Layout(int[] at, byte[] lengths, int bytes) {
            this.at = at;
            this.lengths = lengths;
            this.bytes = bytes;
        }
    }
}
