package io.snowstamp.schema;

import com.squareup.wire.Syntax;
import com.squareup.wire.schema.Field;
import com.squareup.wire.schema.Location;
import com.squareup.wire.schema.internal.parser.EnumConstantElement;
import com.squareup.wire.schema.internal.parser.EnumElement;
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

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The output schema of a Protobuf input schema: every message of the file gets a field
 * {@code int64 <name> = N}. A message's encoding is a sequence of fields in any order, so a value of the
 * output schema is the input value's bytes followed by the tag {@code (N << 3) | 0} and the ID as a
 * varint. N must stay the same for the life of the output subject (its readers know the ID by it): it is
 * the configured number, else the number the output subject's latest schema gives the field in that
 * message, else {@value ProtobufFieldNumbers#DEFAULT_NUMBER} (the highest whose tag takes two bytes, far above the numbers a
 * producer adds next), else the highest free number below it, else one above the highest the message
 * uses or reserves (skipping 19000-19999, which Protobuf keeps for itself). A used or reserved number
 * is refused. The rest of the file is printed back by Wire's printer (comments, options and order kept).
 */
public final class ProtobufEvolution {
    /** Types whose varint a later occurrence replaces (last one wins), so the ID can overwrite them by appending. */
    private static final Set<String> OVERWRITABLE = Set.of("int64", "uint64");

    private ProtobufEvolution() {
    }

    /** {@link #evolve(String, int[], String, int, OnExistingField, String)} for an output subject with no schema yet. */
    public static Evolution evolve(String schemaText, int[] indexes, String field, int configuredNumber, OnExistingField onExisting) {
        return evolve(schemaText, indexes, field, configuredNumber, onExisting, null);
    }

    /**
     * The output file of an input file, and how values of the message the indexes name are stamped. Every message of
     * the file (nested ones too) gets the field where it can take it, so one output schema serves every message of
     * the file on a topic; a message that cannot take it keeps its fields, and only its own values are refused.
     *
     * @param indexes          the value's message indexes ({@link WireFormat#messageIndexes})
     * @param configuredNumber the field number to use, or 0: the number the output subject already gives the field in
     *                         that message, else one above the highest the message uses or reserves
     * @param previousOutput   the output subject's latest schema, or null when it has none
     * @throws BadRecordException the file does not parse, the indexes name no message, or that message cannot take the field
     */
    public static Evolution evolve(String schemaText, int[] indexes, String field, int configuredNumber, OnExistingField onExisting,
                                   String previousOutput) {
        ProtoFileElement file = parse(schemaText);
        String name = fullName(file, path(file, indexes));
        Map<String, Object> verdicts = new HashMap<>();
        Numbering numbering = new Numbering(field, configuredNumber, onExisting, numbersIn(previousOutput, field), file.getSyntax());
        List<TypeElement> types = stamped(file.getTypes(), packagePrefix(file), numbering, verdicts);
        String output = types.equals(file.getTypes()) ? schemaText
                : withoutWireHeader(new ProtoFileElement(file.getLocation(), file.getPackageName(), file.getSyntax(), file.getImports(),
                        file.getPublicImports(), file.getWeakImports(), types, file.getServices(), file.getExtendDeclarations(),
                        file.getOptions()).toSchema());
        Object verdict = verdicts.get(name);
        if (verdict instanceof BadRecordException refused) {
            throw refused;
        }
        Evolution evolution = (Evolution) verdict;
        return new Evolution(evolution.kind(), output, evolution.fieldNumber(), name);
    }

    /**
     * The full name of the message the indexes name: {@code package.Outer.Inner}, as Confluent's record subject
     * strategies name a message.
     */
    public static String fullName(String schemaText, int[] indexes) {
        ProtoFileElement file = parse(schemaText);
        return fullName(file, path(file, indexes));
    }

    /** What decides a message's field: the settings and the numbers the output subject gives it already. */
    private record Numbering(String field, int configured, OnExistingField onExisting, Map<String, Integer> previous, Syntax syntax) {
    }

    /** The types with the field added to every message that takes it; a verdict per message full name into {@code verdicts}. */
    private static List<TypeElement> stamped(List<TypeElement> types, String prefix, Numbering numbering, Map<String, Object> verdicts) {
        List<TypeElement> out = new ArrayList<>(types.size());
        for (TypeElement type : types) {
            if (!(type instanceof MessageElement message)) {
                out.add(type);
                continue;
            }
            String name = prefix + message.getName();
            List<TypeElement> nested = stamped(message.getNestedTypes(), name + ".", numbering, verdicts);
            List<FieldElement> fields = message.getFields();
            try {
                Evolution verdict = verdict(message, name, numbering);
                verdicts.put(name, verdict);
                if (verdict.kind() == Evolution.Kind.APPEND && field(message, numbering.field()) == null) {
                    fields = new ArrayList<>(fields);
                    fields.add(new FieldElement(afterLastField(message), numbering.syntax() == Syntax.PROTO_3 ? null : Field.Label.OPTIONAL,
                            "int64", numbering.field(), null, null, verdict.fieldNumber(), "unique ID added by snowstamp", List.of()));
                }
            } catch (BadRecordException refused) {
                verdicts.put(name, refused);
            }
            out.add(fields == message.getFields() && nested.equals(message.getNestedTypes()) ? message : rebuilt(message, nested, fields));
        }
        return out;
    }

    /** How values of one message are stamped (the schema left out: the file's is known at the end). */
    private static Evolution verdict(MessageElement message, String name, Numbering numbering) {
        FieldElement existing = field(message, numbering.field());
        if (existing != null) {
            return onExisting(name, message, existing, numbering.onExisting());
        }
        String clash = clash(message, numbering.field(), numbering.syntax());
        if (clash != null) {
            throw new BadRecordException(Code.FIELD_EXISTS, "Protobuf message " + message.getName() + " has " + clash
                    + ": protoc refuses a field '" + numbering.field() + "' beside it (set stamp.schema-field to another name)");
        }
        if (reservedName(message, numbering.field())) {
            throw new BadRecordException(Code.FIELD_EXISTS, "field name '" + numbering.field() + "' is reserved in Protobuf message "
                    + message.getName());
        }
        Integer kept = numbering.previous().get(name);
        int number = numbering.configured() != 0 ? ProtobufFieldNumbers.checked(message, numbering.configured())
                : kept != null ? ProtobufFieldNumbers.kept(message, kept, numbering.field()) : ProtobufFieldNumbers.next(message);
        return new Evolution(Evolution.Kind.APPEND, null, number, name);
    }

    private static String packagePrefix(ProtoFileElement file) {
        return file.getPackageName() == null ? "" : file.getPackageName() + ".";
    }

    /** Message full name -> the number of an {@code int64} field named {@code field}, in a printed output schema. */
    private static Map<String, Integer> numbersIn(String outputSchema, String field) {
        Map<String, Integer> numbers = new HashMap<>();
        if (outputSchema != null) {
            try {
                ProtoFileElement file = parse(outputSchema);
                collectNumbers(file.getTypes(), packagePrefix(file), field, numbers);
            } catch (BadRecordException unreadable) {
                // not a Protobuf file (another format's subject): no numbers to keep
            }
        }
        return numbers;
    }

    private static void collectNumbers(List<TypeElement> types, String prefix, String field, Map<String, Integer> into) {
        for (TypeElement type : types) {
            if (type instanceof MessageElement message) {
                for (FieldElement f : message.getFields()) {
                    if (f.getName().equals(field) && f.getType().equals("int64")) {
                        into.put(prefix + message.getName(), f.getTag());
                    }
                }
                collectNumbers(message.getNestedTypes(), prefix + message.getName() + ".", field, into);
            }
        }
    }

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

    private static Evolution onExisting(String fullName, MessageElement message, FieldElement existing, OnExistingField onExisting) {
        switch (onExisting) {
            case KEEP:
                return new Evolution(Evolution.Kind.KEEP, null, existing.getTag(), fullName);
            case OVERWRITE:
                OneOfElement oneOf = oneOfOf(message, existing);
                if (oneOf != null) {
                    // the last member of a oneof in the encoding is the one set: an appended ID would erase the other member
                    throw new BadRecordException(Code.FIELD_EXISTS, "field '" + existing.getName() + "' of Protobuf message "
                            + message.getName() + " is a member of oneof " + oneOf.getName() + ", which an ID cannot overwrite"
                            + " without erasing the oneof's other member");
                }
                if (existing.getLabel() != Field.Label.REPEATED && OVERWRITABLE.contains(existing.getType())) {
                    // a singular scalar field takes the last value the encoding holds: appended, the ID wins
                    return new Evolution(Evolution.Kind.APPEND, null, existing.getTag(), fullName);
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

    /** The oneof the field belongs to, or null. */
    private static OneOfElement oneOfOf(MessageElement message, FieldElement field) {
        for (OneOfElement oneOf : message.getOneOfs()) {
            if (oneOf.getFields().contains(field)) {
                return oneOf;
            }
        }
        return null;
    }

    private static FieldElement field(MessageElement message, String name) {
        for (FieldElement f : allFields(message)) {
            if (f.getName().equals(name)) {
                return f;
            }
        }
        return null;
    }

    /**
     * What in the message makes a field {@code name} one that protoc refuses, or null: a nested type, a nested enum's
     * value (C++ scoping: enum values are siblings of their enum), a oneof or a group of that name, or under proto3 a
     * field whose name differs only in case and underscores (its JSON name would be the same).
     */
    private static String clash(MessageElement message, String name, Syntax syntax) {
        for (TypeElement nested : message.getNestedTypes()) {
            if (nested.getName().equals(name)) {
                return "a nested type named '" + name + "'";
            }
            if (nested instanceof EnumElement enumType) {
                for (EnumConstantElement constant : enumType.getConstants()) {
                    if (constant.getName().equals(name)) {
                        return "a value '" + name + "' of its enum " + enumType.getName() + " (enum values are names of the message)";
                    }
                }
            }
        }
        List<GroupElement> groups = new ArrayList<>(message.getGroups());
        for (OneOfElement oneOf : message.getOneOfs()) {
            if (oneOf.getName().equals(name)) {
                return "a oneof named '" + name + "'";
            }
            groups.addAll(oneOf.getGroups());
        }
        for (GroupElement group : groups) {
            if (group.getName().toLowerCase(Locale.ROOT).equals(name)) {
                return "a group " + group.getName() + " (whose field is named '" + name + "')";
            }
        }
        if (syntax == Syntax.PROTO_3) {
            String json = withoutCaseAndUnderscores(name);
            for (FieldElement f : allFields(message)) {
                if (withoutCaseAndUnderscores(f.getName()).equals(json)) {
                    return "a field '" + f.getName() + "' (proto3 refuses two fields whose names differ only in case and underscores)";
                }
            }
        }
        return null;
    }

    private static String withoutCaseAndUnderscores(String name) {
        return name.replace("_", "").toLowerCase(Locale.ROOT);
    }

    private static boolean reservedName(MessageElement message, String name) {
        for (ReservedElement reserved : message.getReserveds()) {
            if (reserved.getValues().contains(name)) {
                return true;
            }
        }
        return false;
    }

    private static MessageElement rebuilt(MessageElement m, List<TypeElement> nested, List<FieldElement> fields) {
        return new MessageElement(m.getLocation(), m.getName(), m.getDocumentation(), nested, m.getOptions(),
                m.getReserveds(), fields, m.getOneOfs(), m.getExtensions(), m.getGroups(), m.getExtendDeclarations());
    }
}
