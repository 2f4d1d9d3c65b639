package io.snowstamp.schema;

import org.apache.avro.SystemLimitException;

import java.util.ArrayList;
import java.util.List;

/**
 * Operations and their operands in one array, walked in a loop. Programs of nested types hang off
 * {@link #nested}; a recursive record's program is its own descendant.
 */
final class AvroProgram {
    static final int NOTHING = 0;
    static final int ONE_BYTE = 1;
    static final int INT = 2;
    static final int LONG = 3;
    static final int FOUR_BYTES = 4;
    static final int EIGHT_BYTES = 5;
    static final int LENGTH = 6;
    /** followed by the fixed size */
    static final int FIXED = 7;
    /** followed by the symbol count */
    static final int ENUM = 8;
    /** followed by the index of its branches' programs in {@link #nested} */
    static final int UNION = 9;
    /** followed by the index of the element's program */
    static final int ARRAY = 10;
    /** followed by the index of the value's program */
    static final int MAP = 11;
    /** followed by the index of the record's program */
    static final int RECORD = 12;
    static final String CUT_OFF = "the value ends before its Avro schema does (cut off)";
    /**
     * followed by a count and the index of its {@link TextRunLayout} in {@link #runs} (null for a short run): that
     * many {@link #LENGTH}s in a row, walked in a loop of their own (records are mostly text)
     */
    static final int LENGTHS = 13;
    /** a record of no byte that holds itself with no way out: it has no value (Avro's reader recurses until it overflows) */
    static final int NO_VALUE = 14;

    private final List<Integer> building = new ArrayList<>();
    private final List<AvroProgram[]> nestedBuilding = new ArrayList<>();
    /** where each {@link #LENGTHS} operation starts in {@link #building} */
    private final List<Integer> runsBuilding = new ArrayList<>();
    /** where the last operation starts in {@link #building} (an operand may equal an operation's code) */
    private int lastOp = -1;
    private int[] code;
    private AvroProgram[][] nested;
    private TextRunLayout[] runs;
    /** an element type whose values may take no byte (null): its count is bounded as Avro's reader bounds it */
    boolean zeroBytes;

    /** The programs of nested types (once sealed). */
    AvroProgram[][] nested() {
        return nested;
    }

    void op(int... words) {
        boolean length = words.length == 1 && words[0] == LENGTH;
        if (length && lastOp >= 0 && building.get(lastOp) == LENGTH) {
            building.set(lastOp, LENGTHS);      // a second in a row: the run's own operation, with its count
            building.add(2);
            building.add(runsBuilding.size());
            runsBuilding.add(lastOp);
            return;
        }
        if (length && lastOp >= 0 && building.get(lastOp) == LENGTHS) {
            building.set(lastOp + 1, building.get(lastOp + 1) + 1);
            return;
        }
        lastOp = building.size();
        for (int w : words) {
            building.add(w);
        }
    }

    int nest(AvroProgram[] programs) {
        nestedBuilding.add(programs);
        return nestedBuilding.size() - 1;
    }

    void seal() {
        code = building.stream().mapToInt(Integer::intValue).toArray();
        nested = nestedBuilding.toArray(new AvroProgram[0][]);
        runs = new TextRunLayout[runsBuilding.size()];
        for (int r = 0; r < runs.length; r++) {
            int count = code[runsBuilding.get(r) + 1];
            runs[r] = count >= TextRunLayout.FROM_FIELDS ? new TextRunLayout(count) : null;
        }
    }

    /** Walks one value from {@code pos}; the position after it. */
    int walk(byte[] b, int pos) {
        int[] ops = code;
        for (int i = 0; i < ops.length; i++) {
            switch (ops[i]) {
                case NOTHING -> { }
                case ONE_BYTE -> pos = take(b, pos, 1);
                case INT -> pos = varintEnd(b, pos, 5);
                case LONG -> pos = varintEnd(b, pos, 10);
                case FOUR_BYTES -> pos = take(b, pos, 4);
                case EIGHT_BYTES -> pos = take(b, pos, 8);
                case LENGTH -> pos = lengths(b, pos, 1);
                case LENGTHS -> {
                    // as the layout of an earlier value where it holds, else walked
                    int count = ops[++i];
                    TextRunLayout layout = runs[ops[++i]];
                    int after = layout == null ? -1 : layout.matched(b, pos);
                    if (after >= 0) {
                        pos = after;
                    } else {
                        int start = pos;
                        pos = lengths(b, pos, count);
                        if (layout != null) {
                            layout.walked(b, start);
                        }
                    }
                }
                case FIXED -> pos = take(b, pos, ops[++i]);
                case ENUM -> {
                    int start = pos;
                    pos = varintEnd(b, pos, 5);
                    int symbol = zigZagInt(b, start);
                    if (symbol < 0 || symbol >= ops[++i]) {
                        throw new Invalid("enum symbol " + symbol + " of " + ops[i]);
                    }
                }
                case UNION -> {
                    AvroProgram[] branches = nested[ops[++i]];
                    int start = pos;
                    pos = varintEnd(b, pos, 5);
                    int branch = zigZagInt(b, start);
                    if (branch < 0 || branch >= branches.length) {
                        throw new Invalid("union branch " + branch + " of a union of " + branches.length);
                    }
                    pos = branches[branch].walk(b, pos);
                }
                case ARRAY -> pos = blocks(b, pos, nested[ops[++i]][0], false);
                case MAP -> pos = blocks(b, pos, nested[ops[++i]][0], true);
                case RECORD -> pos = nested[ops[++i]][0].walk(b, pos);
                case NO_VALUE -> throw new Invalid("a record that holds itself with no way out (and takes no byte) has no value");
                default -> throw new IllegalStateException("operation " + ops[i]);
            }
        }
        return pos;
    }

    /**
     * {@code count} strings or bytes in a row. Their lengths are mostly one byte (under 64): then a field costs a load,
     * a test and an add, the position the only thing carried from one to the next; the rest go through {@link #length}.
     */
    private static int lengths(byte[] b, int pos, int count) {
        int end = b.length;
        for (int n = 0; n < count; n++) {
            if (pos >= end) {
                throw new Invalid(CUT_OFF);
            }
            int first = b[pos];
            // a one-byte zig-zag varint of a length >= 0: high bit and sign bit clear; it may overshoot the end by
            // up to 64, caught by the next field's test or the last one below
            pos = (first & 0x81) == 0 ? pos + 1 + (first >>> 1) : length(b, pos);
        }
        if (pos > end) {
            throw new Invalid(CUT_OFF);
        }
        return pos;
    }

    /** A string's or bytes' length and content: the position after it. */
    private static int length(byte[] b, int pos) {
        int start = pos;
        pos = varintEnd(b, pos, 10);
        long length = zigZag(b, start);
        if (length < 0) {
            throw new Invalid("a string or bytes of negative length " + length);
        }
        return take(b, pos, length);
    }

    /** An array's or map's blocks: a count (negative: followed by the block's size in bytes), the items; a count of 0 ends. */
    private static int blocks(byte[] b, int pos, AvroProgram item, boolean keyed) {
        long total = 0;
        while (true) {
            int start = pos;
            pos = varintEnd(b, pos, 10);
            long count = zigZag(b, start);
            if (count == 0) {
                return pos;
            }
            if (count < 0) {
                count = -count;
                int sizeStart = pos;
                pos = varintEnd(b, pos, 10);
                if (zigZag(b, sizeStart) < 0) {
                    throw new Invalid("a block byte-size is negative");
                }
            }
            SystemLimitException.checkMaxCollectionLength(total, count);
            total += count;
            if (item.zeroBytes && !keyed) {
                // items of no byte: one walked answers for all (a loop over them would be a CPU sink a few bytes can ask
                // for); one is walked, as a record that holds itself with no way out has no value (Avro's reader overflows)
                SystemLimitException.checkMaxCollectionAllocation(count);
                pos = item.walk(b, pos);
                continue;
            }
            for (long n = 0; n < count; n++) {
                if (keyed) {
                    int keyStart = pos;
                    pos = varintEnd(b, pos, 10);
                    long length = zigZag(b, keyStart);
                    if (length < 0) {
                        throw new Invalid("a map key of negative length " + length);
                    }
                    pos = take(b, pos, length);
                }
                pos = item.walk(b, pos);
            }
        }
    }

    private static int take(byte[] b, int pos, long bytes) {
        if (bytes > b.length - pos) {
            throw new Invalid(CUT_OFF);
        }
        return pos + (int) bytes;
    }

    /** The position after the varint at {@code pos} of at most {@code maxBytes}. */
    private static int varintEnd(byte[] b, int pos, int maxBytes) {
        if (pos < b.length && b[pos] >= 0) {
            return pos + 1;     // most lengths, symbols and branches: one byte
        }
        int limit = Math.min(b.length, pos + maxBytes);
        for (int p = pos; p < limit; p++) {
            if (b[p] >= 0) {
                return p + 1;
            }
        }
        throw new Invalid(limit == b.length ? CUT_OFF
                : "a varint longer than " + maxBytes + " bytes");
    }

    /**
     * The zig-zag int at {@code pos} (a varint of up to 5 bytes {@link #varintEnd} has found whole), its bits past 32
     * dropped as Avro's {@code readInt} drops them (for enum symbols and union branches).
     */
    private static int zigZagInt(byte[] b, int pos) {
        int raw = 0;
        for (int p = pos, shift = 0; p < pos + 5; p++, shift += 7) {
            raw |= (b[p] & 0x7F) << shift;
            if (b[p] >= 0) {
                break;
            }
        }
        return (raw >>> 1) ^ -(raw & 1);
    }

    /** The zig-zag varint at {@code pos}, which {@link #varintEnd} has found whole. */
    private static long zigZag(byte[] b, int pos) {
        int first = b[pos];
        if (first >= 0) {
            return (first >>> 1) ^ -(first & 1);
        }
        long raw = 0;
        int limit = Math.min(b.length, pos + 10);
        for (int p = pos, shift = 0; p < limit; p++, shift += 7) {
            raw |= (long) (b[p] & 0x7F) << shift;
            if (b[p] >= 0) {
                break;
            }
        }
        return (raw >>> 1) ^ -(raw & 1);
    }

    /** Why a walk stopped; turned into the dead-letter reason. No stack trace: bad input is data. */
    static final class Invalid extends RuntimeException {
        Invalid(String message) {
            super(message, null, false, false);
        }
    }
}
