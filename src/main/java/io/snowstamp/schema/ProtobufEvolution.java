package io.snowstamp.schema;

import com.squareup.wire.Syntax;
import com.squareup.wire.schema.Field;
import com.squareup.wire.schema.Location;
import com.squareup.wire.schema.internal.parser.ExtensionsElement;
import com.squareup.wire.schema.internal.parser.FieldElement;
import com.squareup.wire.schema.internal.parser.GroupElement;
import com.squareup.wire.schema.internal.parser.MessageElement;
import com.squareup.wire.schema.internal.parser.OneOfElement;
import com.squareup.wire.schema.internal.parser.ProtoFileElement;
import com.squareup.wire.schema.internal.parser.ProtoParser;
import com.squareup.wire.schema.internal.parser.ReservedElement;
import com.squareup.wire.schema.internal.parser.TypeElement;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import kotlin.ranges.IntRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The output schema of a Protobuf input schema: the message the value's indexes name gets a field
 * {@code int64 <name> = N}. A message's encoding is a sequence of fields in any order, so a value of the
 * output schema is the input value's bytes followed by the tag {@code (N << 3) | 0} and the ID as a
 * varint. N is the configured number, or one above the highest number the message uses or reserves
 * (skipping 19000-19999, which Protobuf keeps for itself); a used or reserved number is refused.
 * The rest of the file is printed back by Wire's printer (comments, options and order kept).
 */
public final class ProtobufEvolution {
    /** The largest field number Protobuf allows. */
    static final int MAX_FIELD_NUMBER = 536_870_911;
    private static final int PROTOBUF_RESERVED_FIRST = 19_000;
    private static final int PROTOBUF_RESERVED_LAST = 19_999;
    /** Types whose varint a later occurrence replaces (last one wins), so the ID can overwrite them by appending. */
    private static final Set<String> OVERWRITABLE = Set.of("int64", "uint64");

    private ProtobufEvolution() {
    }

    /**
     * @param indexes          the value's message indexes ({@link WireFormat#messageIndexes})
     * @param configuredNumber the field number to use, or 0 for the highest used + 1
     */
    public static Evolution evolve(String schemaText, int[] indexes, String field, int configuredNumber, OnExistingField onExisting) {
        ProtoFileElement file = parse(schemaText);
        MessageElement[] path = path(file, indexes);
        MessageElement message = path[path.length - 1];
        FieldElement existing = field(message, field);
        if (existing != null) {
            return onExisting(schemaText, fullName(file, path), message, existing, onExisting);
        }
        if (reservedName(message, field)) {
            throw new BadRecordException(Code.FIELD_EXISTS, "field name '" + field + "' is reserved in Protobuf message "
                    + message.getName());
        }
        int number = configuredNumber == 0 ? nextNumber(message) : checkedNumber(message, configuredNumber);
        Field.Label label = file.getSyntax() == Syntax.PROTO_3 ? null : Field.Label.OPTIONAL;
        List<FieldElement> fields = new ArrayList<>(message.getFields());
        fields.add(new FieldElement(afterLastField(message), label, "int64", field, null, null, number,
                "unique ID added by snowstamp", List.of()));
        TypeElement replacement = withFields(message, fields);
        for (int level = path.length - 2; level >= 0; level--) {
            replacement = withNested(path[level], replaced(path[level].getNestedTypes(), path[level + 1], replacement));
        }
        ProtoFileElement output = new ProtoFileElement(file.getLocation(), file.getPackageName(), file.getSyntax(),
                file.getImports(), file.getPublicImports(), file.getWeakImports(), replaced(file.getTypes(), path[0], replacement),
                file.getServices(), file.getExtendDeclarations(), file.getOptions());
        return new Evolution(Evolution.Kind.APPEND, withoutWireHeader(output.toSchema()), number, fullName(file, path));
    }

    /** {@code package.Outer.Inner}, as Confluent's record subject strategies name a message. */
    private static String fullName(ProtoFileElement file, MessageElement[] path) {
        StringBuilder name = new StringBuilder(file.getPackageName() == null ? "" : file.getPackageName());
        for (MessageElement m : path) {
            name.append(name.length() == 0 ? "" : ".").append(m.getName());
        }
        return name.toString();
    }

    /** Wire prints fields in the order of their place in the source: the new one goes one line below the last. */
    private static Location afterLastField(MessageElement message) {
        int line = message.getLocation().getLine();
        for (FieldElement f : allFields(message)) {
            line = Math.max(line, f.getLocation().getLine());
        }
        return message.getLocation().at(line + 1, 1);
    }

    /** The printer's first lines name it and a file name the schema never had. */
    private static String withoutWireHeader(String printed) {
        String header = "// Proto schema formatted by Wire, do not edit.\n// Source: schema.proto\n\n";
        return printed.startsWith(header) ? printed.substring(header.length()) : printed;
    }

    private static Evolution onExisting(String schemaText, String fullName, MessageElement message, FieldElement existing,
                                        OnExistingField onExisting) {
        switch (onExisting) {
            case KEEP:
                return new Evolution(Evolution.Kind.KEEP, schemaText, existing.getTag(), fullName);
            case OVERWRITE:
                if (existing.getLabel() != Field.Label.REPEATED && OVERWRITABLE.contains(existing.getType())) {
                    // a singular scalar field takes the last value the encoding holds: appended, the ID wins
                    return new Evolution(Evolution.Kind.APPEND, schemaText, existing.getTag(), fullName);
                }
                throw new BadRecordException(Code.FIELD_EXISTS, "field '" + existing.getName() + "' already exists in Protobuf"
                        + " message " + message.getName() + " as " + (existing.getLabel() == Field.Label.REPEATED ? "repeated " : "")
                        + existing.getType() + ", which an ID (int64) cannot overwrite");
            default:
                throw new BadRecordException(Code.FIELD_EXISTS, "field '" + existing.getName() + "' already exists in Protobuf"
                        + " message " + message.getName() + " (stamp.on-existing-field=reject)");
        }
    }

    static ProtoFileElement parse(String schemaText) {
        try {
            return ProtoParser.Companion.parse(Location.get("schema.proto"), schemaText);
        } catch (RuntimeException e) {     // Wire reports syntax errors as IllegalStateException / IllegalArgumentException
            throw new BadRecordException(Code.INVALID_SCHEMA, "the value's Protobuf schema does not parse: " + e.getMessage());
        }
    }

    /** The messages from the file's top level down to the one the indexes name (indexes count messages only). */
    private static MessageElement[] path(ProtoFileElement file, int[] indexes) {
        MessageElement[] path = new MessageElement[indexes.length];
        List<TypeElement> level = file.getTypes();
        for (int i = 0; i < indexes.length; i++) {
            path[i] = nthMessage(level, indexes[i], indexes);
            level = path[i].getNestedTypes();
        }
        return path;
    }

    private static MessageElement nthMessage(List<TypeElement> types, int n, int[] indexes) {
        int seen = 0;
        for (TypeElement type : types) {
            if (type instanceof MessageElement message && seen++ == n) {
                return message;
            }
        }
        throw new BadRecordException(Code.BAD_MESSAGE_INDEXES, "message indexes " + WireFormat.describe(indexes)
                + " name no message of the value's Protobuf schema");
    }

    /** Every field of the message, oneof members included. */
    private static List<FieldElement> allFields(MessageElement message) {
        List<FieldElement> fields = new ArrayList<>(message.getFields());
        for (OneOfElement oneOf : message.getOneOfs()) {
            fields.addAll(oneOf.getFields());
        }
        return fields;
    }

    private static FieldElement field(MessageElement message, String name) {
        for (FieldElement f : allFields(message)) {
            if (f.getName().equals(name)) {
                return f;
            }
        }
        return null;
    }

    private static boolean reservedName(MessageElement message, String name) {
        for (ReservedElement reserved : message.getReserveds()) {
            if (reserved.getValues().contains(name)) {
                return true;
            }
        }
        return false;
    }

    private static int nextNumber(MessageElement message) {
        long highest = 0;
        for (int[] range : usedRanges(message)) {
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

    private static int checkedNumber(MessageElement message, int number) {
        for (int[] range : usedRanges(message)) {
            if (number >= range[0] && number <= range[1]) {
                throw new BadRecordException(Code.FIELD_NUMBER_TAKEN, "field number " + number + " is already used or reserved"
                        + " in Protobuf message " + message.getName() + " (stamp.protobuf-field-number)");
            }
        }
        return number;
    }

    /** Numbers taken in the message, as inclusive ranges: fields, oneof members, groups, reserved numbers, extension ranges. */
    private static List<int[]> usedRanges(MessageElement message) {
        List<int[]> used = new ArrayList<>();
        for (FieldElement f : allFields(message)) {
            used.add(new int[] {f.getTag(), f.getTag()});
        }
        for (GroupElement group : message.getGroups()) {
            used.add(new int[] {group.getTag(), group.getTag()});
        }
        for (OneOfElement oneOf : message.getOneOfs()) {
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

    private static MessageElement withFields(MessageElement m, List<FieldElement> fields) {
        return new MessageElement(m.getLocation(), m.getName(), m.getDocumentation(), m.getNestedTypes(), m.getOptions(),
                m.getReserveds(), fields, m.getOneOfs(), m.getExtensions(), m.getGroups(), m.getExtendDeclarations());
    }

    private static MessageElement withNested(MessageElement m, List<TypeElement> nested) {
        return new MessageElement(m.getLocation(), m.getName(), m.getDocumentation(), nested, m.getOptions(),
                m.getReserveds(), m.getFields(), m.getOneOfs(), m.getExtensions(), m.getGroups(), m.getExtendDeclarations());
    }

    private static List<TypeElement> replaced(List<TypeElement> types, TypeElement old, TypeElement replacement) {
        List<TypeElement> out = new ArrayList<>(types);
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i) == old) {
                out.set(i, replacement);
            }
        }
        return out;
    }
}
