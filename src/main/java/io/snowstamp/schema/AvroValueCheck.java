package io.snowstamp.schema;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.SystemLimitException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An Avro payload walked over its writer schema to its last byte, as Apache Avro's
 * {@code GenericDatumReader.read} reads it and then {@code BinaryDecoder.isEnd()}, but over the array
 * itself: the schema is compiled once into a flat program per record (an operation per field, one per
 * run of text fields, walked by {@link AvroProgram}), so a field costs a varint read and a bounds check, not a call into a decoder (measured: several times less
 * than {@code BinaryDecoder}'s skips, which cost about as much as copying the value). It checks what an
 * Avro reader would refuse: a value cut off, bytes left over, a union branch or enum symbol out of
 * range, a negative length, a varint too long, and Avro's own limits on collection sizes. Nothing is
 * decoded: strings are skipped, not read. A long run of text fields laid out as in an earlier value is checked in one
 * pass ({@link TextRunLayout}).
 */
final class AvroValueCheck implements ValueCheck {

    static {
        // Avro's limits initialised here, not first at the bottom of a deep walk: a stack overflow inside their class's
        // initialiser would leave the class unusable, and every later value with an array or a map would fail
        SystemLimitException.checkMaxCollectionLength(0L, 0L);
    }

    private final AvroProgram writer;
    private final int schemaId;
    /**
     * Whether values of the schema can hold arrays of items that take no byte (null): Avro bounds their items across the
     * whole value (a scope of its own per value), so the walk opens that scope too; other schemas skip its cost.
     */
    private final boolean allocationScope;

    /** The top-level fields before the one an overwrite replaces (null: none is). */
    private final AvroProgram before;

    AvroValueCheck(Schema writer, int schemaId) {
        this(writer, schemaId, -1);
    }

    /** {@code overwritten}: the position of the top-level field whose start {@link #fieldStart} finds (-1: none). */
    AvroValueCheck(Schema writer, int schemaId, int overwritten) {
        Map<String, AvroProgram> records = new HashMap<>();
        this.writer = compile(writer, records);
        this.schemaId = schemaId;
        this.allocationScope = zeroByteItems(this.writer, new java.util.HashSet<>());
        if (overwritten < 0) {
            before = null;
        } else {
            before = new AvroProgram();
            for (Schema.Field field : writer.getFields().subList(0, overwritten)) {
                emit(field.schema(), before, records);
            }
            before.seal();
        }
    }

    @Override
    public void check(byte[] value) {
        int end = walk(writer, value);
        if (end != value.length) {
            throw invalid((value.length - end) + " bytes are left over after one value of its Avro schema");
        }
    }

    /** Where the top-level field an overwrite replaces starts in {@code value}, a value {@link #check} accepted. */
    int fieldStart(byte[] value) {
        return walk(before, value);
    }

    /** The position after {@code program} walked over {@code value} from its first byte after the frame. */
    private int walk(AvroProgram program, byte[] value) {
        if (allocationScope) {
            SystemLimitException.beginCollectionAllocationScope();
        }
        try {
            return program.walk(value, WireFormat.HEADER_BYTES + touch(value));
        } catch (AvroProgram.Invalid e) {
            throw invalid(e.getMessage());
        } catch (AvroRuntimeException | UnsupportedOperationException e) {      // Avro's limits on collections (both kinds)
            throw invalid(e.getMessage());
        } catch (StackOverflowError e) {
            throw invalid("recursive values nested too deep to walk");
        } finally {
            if (allocationScope) {
                SystemLimitException.endCollectionAllocationScope();
            }
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
    private static AvroProgram compile(Schema schema, Map<String, AvroProgram> records) {
        AvroProgram known = schema.getType() == Schema.Type.RECORD ? records.get(schema.getFullName()) : null;
        if (known != null) {
            return known;
        }
        AvroProgram program = new AvroProgram();
        if (schema.getType() == Schema.Type.RECORD && zeroBytes(schema, identitySet())) {
            // nothing to read: not walked field by field (a record sharing the next along many paths is exponential)
            program.op(finite(schema, new java.util.IdentityHashMap<>()) ? AvroProgram.NOTHING : AvroProgram.NO_VALUE);
            program.seal();
            records.put(schema.getFullName(), program);
            return program;
        }
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

    private static void emit(Schema schema, AvroProgram program, Map<String, AvroProgram> records) {
        switch (schema.getType()) {
            case NULL -> program.op(AvroProgram.NOTHING);
            case BOOLEAN -> program.op(AvroProgram.ONE_BYTE);
            case INT -> program.op(AvroProgram.INT);
            case LONG -> program.op(AvroProgram.LONG);
            case FLOAT -> program.op(AvroProgram.FOUR_BYTES);
            case DOUBLE -> program.op(AvroProgram.EIGHT_BYTES);
            case STRING, BYTES -> program.op(AvroProgram.LENGTH);
            case FIXED -> program.op(AvroProgram.FIXED, schema.getFixedSize());
            case ENUM -> program.op(AvroProgram.ENUM, schema.getEnumSymbols().size());
            case UNION -> {
                List<Schema> branches = schema.getTypes();
                AvroProgram[] compiled = new AvroProgram[branches.size()];
                for (int i = 0; i < compiled.length; i++) {
                    compiled[i] = compile(branches.get(i), records);
                }
                program.op(AvroProgram.UNION, program.nest(compiled));
            }
            case ARRAY -> program.op(AvroProgram.ARRAY, program.nest(new AvroProgram[] {element(schema.getElementType(), records)}));
            case MAP -> program.op(AvroProgram.MAP, program.nest(new AvroProgram[] {element(schema.getValueType(), records)}));
            case RECORD -> program.op(AvroProgram.RECORD, program.nest(new AvroProgram[] {compile(schema, records)}));
            default -> throw new IllegalArgumentException("not an Avro type: " + schema.getType());
        }
    }

    /** Whether a program reachable from {@code program} is the item of an array or map whose items take no byte. */
    private static boolean zeroByteItems(AvroProgram program, java.util.Set<AvroProgram> seen) {
        if (!seen.add(program)) {
            return false;
        }
        if (program.zeroBytes) {
            return true;
        }
        for (AvroProgram[] nested : program.nested()) {
            for (AvroProgram each : nested) {
                if (zeroByteItems(each, seen)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static AvroProgram element(Schema schema, Map<String, AvroProgram> records) {
        AvroProgram element = compile(schema, records);
        element.zeroBytes = zeroBytes(schema, identitySet());
        return element;
    }

    /**
     * Whether values of {@code schema} take no byte, as Avro's {@code GenericDatumReader.isZeroByteSchema} says, each record
     * looked at once: Avro's own walk looks at a record again along every path to it (a record whose two fields share the
     * next one, forty deep, would take 2^40 steps at the schema's first value). Every step is an "and", so a record seen
     * before is either still being looked at (a record that holds itself adds no byte, as Avro counts it) or took none.
     */
    static boolean zeroBytes(Schema schema, java.util.Set<Schema> seen) {
        return switch (schema.getType()) {
            case NULL -> true;
            case FIXED -> schema.getFixedSize() == 0;
            case RECORD -> !seen.add(schema) || schema.getFields().stream().allMatch(field -> zeroBytes(field.schema(), seen));
            default -> false;
        };
    }

    /**
     * Whether a record of no byte has a value: none holds itself through its records' fields (each field is a value every
     * value must have, and a record of no byte has no union to end it).
     */
    private static boolean finite(Schema record, Map<Schema, Boolean> done) {
        Boolean known = done.putIfAbsent(record, false);       // false while under way: met again, a loop
        if (known != null) {
            return known;
        }
        for (Schema.Field field : record.getFields()) {
            if (field.schema().getType() == Schema.Type.RECORD && !finite(field.schema(), done)) {
                return false;
            }
        }
        done.put(record, true);
        return true;
    }

    private static java.util.Set<Schema> identitySet() {
        return java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    }


}
