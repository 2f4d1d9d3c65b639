package io.snowstamp.schema;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.SystemLimitException;
import org.apache.avro.generic.GenericDatumReader;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An Avro payload walked over its writer schema to its last byte, as Apache Avro's
 * {@code GenericDatumReader.skip} walks it and then {@code BinaryDecoder.isEnd()}, but over the array
 * itself: the schema is compiled once into a flat program per record (an operation per field, one per
 * run of text fields), so a field costs a varint read and a bounds check, not a call into a decoder (measured: several times less
 * than {@code BinaryDecoder}'s skips, which cost about as much as copying the value). It checks what an
 * Avro reader would refuse: a value cut off, bytes left over, a union branch or enum symbol out of
 * range, a negative length, a varint too long, and Avro's own limits on collection sizes. Nothing is
 * decoded: strings are skipped, not read. A long run of text fields laid out as in an earlier value is checked in one
 * pass ({@link TextRunLayout}).
 */
final class AvroValueCheck implements ValueCheck {
    private static final int NOTHING = 0;
    private static final int ONE_BYTE = 1;
    private static final int INT = 2;
    private static final int LONG = 3;
    private static final int FOUR_BYTES = 4;
    private static final int EIGHT_BYTES = 5;
    private static final int LENGTH = 6;
    /** followed by the fixed size */
    private static final int FIXED = 7;
    /** followed by the symbol count */
    private static final int ENUM = 8;
    /** followed by the index of its branches' programs in {@link Program#nested} */
    private static final int UNION = 9;
    /** followed by the index of the element's program */
    private static final int ARRAY = 10;
    /** followed by the index of the value's program */
    private static final int MAP = 11;
    /** followed by the index of the record's program */
    private static final int RECORD = 12;
    private static final String CUT_OFF = "the value ends before its Avro schema does (cut off)";
    /**
     * followed by a count and the index of its {@link TextRunLayout} in {@link Program#runs} (null for a short run): that
     * many {@link #LENGTH}s in a row, walked in a loop of their own (records are mostly text)
     */
    private static final int LENGTHS = 13;

    private final Program writer;
    private final int schemaId;

    AvroValueCheck(Schema writer, int schemaId) {
        this.writer = compile(writer, new HashMap<>());
        this.schemaId = schemaId;
    }

    @Override
    public void check(byte[] value) {
        int end;
        try {
            end = writer.walk(value, WireFormat.HEADER_BYTES + touch(value));
        } catch (Invalid e) {
            throw invalid(e.getMessage());
        } catch (AvroRuntimeException e) {      // SystemLimitException: a collection larger than Avro's readers take
            throw invalid(e.getMessage());
        } catch (StackOverflowError e) {
            throw invalid("recursive values nested too deep to walk");
        }
        if (end != value.length) {
            throw invalid((value.length - end) + " bytes are left over after one value of its Avro schema");
        }
    }

    /**
     * Reads a byte of every cache line of the value, each load independent of the others, so that the lines still in
     * memory come in all at once rather than one after another as the walk reaches them (each of its loads waits for
     * the one before: the position is in the bytes). A record polled a while ago is mostly out of the core's caches.
     * Always 0: the bytes ORed are sign-extended, so in -128..127, where {@code (t >> 8) + (t >>> 31)} is 0; the
     * compiler cannot tell, so it keeps the loads.
     */
    private static int touch(byte[] value) {
        int touched = 0;
        for (int p = WireFormat.HEADER_BYTES + 64; p < value.length; p += 64) {
            touched |= value[p];
        }
        return (touched >> 8) + (touched >>> 31);
    }

    private BadRecordException invalid(String why) {
        return new BadRecordException(Code.INVALID_VALUE, "not a value of Avro schema ID " + schemaId + ": " + why);
    }

    /** The program of one schema: for a record its fields in order, else the one type. */
    private static Program compile(Schema schema, Map<String, Program> records) {
        Program known = schema.getType() == Schema.Type.RECORD ? records.get(schema.getFullName()) : null;
        if (known != null) {
            return known;
        }
        Program program = new Program();
        if (schema.getType() == Schema.Type.RECORD) {
            records.put(schema.getFullName(), program);     // before its fields: a field of its own type refers to it
            for (Schema.Field field : schema.getFields()) {
                emit(field.schema(), program, records);
            }
        } else {
            emit(schema, program, records);
        }
        program.seal();
        return program;
    }

    private static void emit(Schema schema, Program program, Map<String, Program> records) {
        switch (schema.getType()) {
            case NULL -> program.op(NOTHING);
            case BOOLEAN -> program.op(ONE_BYTE);
            case INT -> program.op(INT);
            case LONG -> program.op(LONG);
            case FLOAT -> program.op(FOUR_BYTES);
            case DOUBLE -> program.op(EIGHT_BYTES);
            case STRING, BYTES -> program.op(LENGTH);
            case FIXED -> program.op(FIXED, schema.getFixedSize());
            case ENUM -> program.op(ENUM, schema.getEnumSymbols().size());
            case UNION -> {
                List<Schema> branches = schema.getTypes();
                Program[] compiled = new Program[branches.size()];
                for (int i = 0; i < compiled.length; i++) {
                    compiled[i] = compile(branches.get(i), records);
                }
                program.op(UNION, program.nest(compiled));
            }
            case ARRAY -> program.op(ARRAY, program.nest(new Program[] {element(schema.getElementType(), records)}));
            case MAP -> program.op(MAP, program.nest(new Program[] {element(schema.getValueType(), records)}));
            case RECORD -> program.op(RECORD, program.nest(new Program[] {compile(schema, records)}));
            default -> throw new IllegalArgumentException("not an Avro type: " + schema.getType());
        }
    }

    private static Program element(Schema schema, Map<String, Program> records) {
        Program element = compile(schema, records);
        element.zeroBytes = GenericDatumReader.isZeroByteSchema(schema);
        return element;
    }

    /**
     * Operations and their operands in one array, walked in a loop. Programs of nested types hang off
     * {@link #nested}; a recursive record's program is its own descendant.
     */
    private static final class Program {
        private final List<Integer> building = new ArrayList<>();
        private final List<Program[]> nestedBuilding = new ArrayList<>();
        /** where each {@link #LENGTHS} operation starts in {@link #building} */
        private final List<Integer> runsBuilding = new ArrayList<>();
        /** where the last operation starts in {@link #building} (an operand may equal an operation's code) */
        private int lastOp = -1;
        private int[] code;
        private Program[][] nested;
        private TextRunLayout[] runs;
        /** an element type whose values may take no byte (null): its count is bounded as Avro's reader bounds it */
        private boolean zeroBytes;

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

        int nest(Program[] programs) {
            nestedBuilding.add(programs);
            return nestedBuilding.size() - 1;
        }

        void seal() {
            code = building.stream().mapToInt(Integer::intValue).toArray();
            nested = nestedBuilding.toArray(new Program[0][]);
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
                        long symbol = zigZag(b, start);
                        if (symbol < 0 || symbol >= ops[++i]) {
                            throw new Invalid("enum symbol " + symbol + " of " + ops[i]);
                        }
                    }
                    case UNION -> {
                        Program[] branches = nested[ops[++i]];
                        int start = pos;
                        pos = varintEnd(b, pos, 5);
                        long branch = zigZag(b, start);
                        if (branch < 0 || branch >= branches.length) {
                            throw new Invalid("union branch " + branch + " of a union of " + branches.length);
                        }
                        pos = branches[(int) branch].walk(b, pos);
                    }
                    case ARRAY -> pos = blocks(b, pos, nested[ops[++i]][0], false);
                    case MAP -> pos = blocks(b, pos, nested[ops[++i]][0], true);
                    case RECORD -> pos = nested[ops[++i]][0].walk(b, pos);
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
        private static int blocks(byte[] b, int pos, Program item, boolean keyed) {
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
                    pos = varintEnd(b, pos, 10);
                }
                SystemLimitException.checkMaxCollectionLength(total, count);
                if (item.zeroBytes && !keyed) {
                    SystemLimitException.checkMaxCollectionAllocation(count);
                }
                total += count;
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
    }

    /** Why a walk stopped; turned into the dead-letter reason. No stack trace: bad input is data. */
    private static final class Invalid extends RuntimeException {
        Invalid(String message) {
            super(message, null, false, false);
        }
    }
}
