package io.snowstamp.schema;

import com.squareup.wire.schema.internal.parser.ExtensionsElement;
import com.squareup.wire.schema.internal.parser.FieldElement;
import com.squareup.wire.schema.internal.parser.GroupElement;
import com.squareup.wire.schema.internal.parser.MessageElement;
import com.squareup.wire.schema.internal.parser.OneOfElement;
import com.squareup.wire.schema.internal.parser.ReservedElement;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import kotlin.ranges.IntRange;

import java.util.ArrayList;
import java.util.List;

/**
 * The number the ID field takes in one Protobuf message: the configured one, the one the output subject gives it
 * already, or the next free one (rules: {@link ProtobufEvolution}). Apart from it because the numbers a message uses or
 * reserves are their own question, asked of the message alone; a number the message takes is refused.
 */
final class ProtobufFieldNumbers {
    /** The largest field number Protobuf allows. */
    static final int MAX_FIELD_NUMBER = 536_870_911;
    /** The field's number when nothing else decides it: the highest whose tag ({@code N << 3}) is a 2-byte varint. */
    static final int DEFAULT_NUMBER = 2047;
    private static final int PROTOBUF_RESERVED_FIRST = 19_000;
    private static final int PROTOBUF_RESERVED_LAST = 19_999;

    private ProtobufFieldNumbers() {
    }

    /**
     * {@value #DEFAULT_NUMBER}, else the highest free number below it, else one above the highest the message uses or
     * reserves (skipping 19000-19999, which Protobuf keeps for itself).
     */
    static int next(MessageElement message) {
        List<int[]> used = usedRanges(message);
        for (int candidate = DEFAULT_NUMBER; candidate > 0; candidate--) {
            if (free(used, candidate)) {
                return candidate;
            }
        }
        long highest = 0;
        for (int[] range : used) {
            highest = Math.max(highest, range[1]);
        }
        long next = highest + 1;
        if (next >= PROTOBUF_RESERVED_FIRST && next <= PROTOBUF_RESERVED_LAST) {
            next = PROTOBUF_RESERVED_LAST + 1;
        }
        if (next > MAX_FIELD_NUMBER) {
            throw new BadRecordException(Code.FIELD_NUMBER_TAKEN, "Protobuf message " + message.getName()
                    + " uses or reserves field numbers up to the largest allowed: configure stamp.protobuf-field-number");
        }
        return (int) next;
    }

    /** The number the output subject gives the field already: kept, or refused when the input has taken it since. */
    static int kept(MessageElement message, int number, String field) {
        if (!free(usedRanges(message), number)) {
            throw new BadRecordException(Code.FIELD_NUMBER_TAKEN, "field number " + number + ", which the output subject gives '"
                    + field + "' in Protobuf message " + message.getName() + ", is now used or reserved by the input schema;"
                    + " another number would make the output subject's versions disagree on the ID (set"
                    + " stamp.protobuf-field-number to a number free in every version, with a new output subject)");
        }
        return number;
    }

    /** The configured number ({@code stamp.protobuf-field-number}), refused when the message uses or reserves it. */
    static int checked(MessageElement message, int number) {
        if (!free(usedRanges(message), number)) {
            throw new BadRecordException(Code.FIELD_NUMBER_TAKEN, "field number " + number + " is already used or reserved"
                    + " in Protobuf message " + message.getName() + " (stamp.protobuf-field-number)");
        }
        return number;
    }

    private static boolean free(List<int[]> used, int number) {
        for (int[] range : used) {
            if (number >= range[0] && number <= range[1]) {
                return false;
            }
        }
        return true;
    }

    /** Numbers taken in the message, as inclusive ranges: fields, oneof members, groups, reserved numbers, extension ranges. */
    private static List<int[]> usedRanges(MessageElement message) {
        List<int[]> used = new ArrayList<>();
        for (FieldElement f : message.getFields()) {
            used.add(new int[] {f.getTag(), f.getTag()});
        }
        for (GroupElement group : message.getGroups()) {
            used.add(new int[] {group.getTag(), group.getTag()});
        }
        for (OneOfElement oneOf : message.getOneOfs()) {
            for (FieldElement f : oneOf.getFields()) {
                used.add(new int[] {f.getTag(), f.getTag()});
            }
            for (GroupElement group : oneOf.getGroups()) {
                used.add(new int[] {group.getTag(), group.getTag()});
            }
        }
        for (ReservedElement reserved : message.getReserveds()) {
            addNumbers(reserved.getValues(), used);
        }
        for (ExtensionsElement extensions : message.getExtensions()) {
            addNumbers(extensions.getValues(), used);
        }
        return used;
    }

    private static void addNumbers(List<Object> values, List<int[]> into) {
        for (Object value : values) {
            if (value instanceof Integer number) {
                into.add(new int[] {number, number});
            } else if (value instanceof IntRange range) {
                into.add(new int[] {range.getFirst(), range.getLast()});
            }
        }
    }
}
