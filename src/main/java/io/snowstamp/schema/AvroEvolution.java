package io.snowstamp.schema;

import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The output schema of an Avro input schema: the input record plus a trailing {@code long} field. Avro
 * writes a record as its fields in schema order with nothing around them, so a value of the output
 * schema is the input value's bytes followed by the field's zig-zag varint. The field has a default
 * (0), so the output subject accepts it under BACKWARD compatibility (a reader of a new output schema
 * reads the old output data) and follows the input schema's own evolution.
 */
public final class AvroEvolution {
    /** The new field's default, which readers see for data written without it. */
    public static final long DEFAULT = 0L;

    private AvroEvolution() {
    }

    /**
     * What a record of {@code schemaText} gets: the field appended, or (the field being there already)
     * as {@code onExisting} says.
     */
    public static Evolution evolve(String schemaText, String field, OnExistingField onExisting) {
        Schema input = parse(schemaText);
        if (input.getType() != Schema.Type.RECORD) {
            throw new BadRecordException(Code.NOT_RECORD, "the value's Avro schema is " + describe(input)
                    + ", not a record: a field cannot be added to it");
        }
        Schema.Field existing = input.getField(field);
        if (existing != null) {
            return onExisting(input, existing, onExisting);
        }
        if (refersTo(input.getFullName(), input, new HashSet<>(), false)) {
            // the field would belong to the type itself, and every nested copy would need it too: no appending can do that
            throw new BadRecordException(Code.RECURSIVE_RECORD, "Avro record " + input.getFullName() + " contains itself (a recursive"
                    + " type): a field added to it would be missing from every nested " + input.getName() + " in the value's bytes");
        }
        List<Schema.Field> fields = new ArrayList<>();
        for (Schema.Field f : input.getFields()) {
            fields.add(new Schema.Field(f, f.schema()));       // a field belongs to one record: copies
        }
        fields.add(new Schema.Field(field, Schema.create(Schema.Type.LONG), "unique ID added by snowstamp", DEFAULT));
        Schema output = Schema.createRecord(input.getName(), input.getDoc(), input.getNamespace(), input.isError(), fields);
        input.getAliases().forEach(output::addAlias);
        for (Map.Entry<String, Object> prop : input.getObjectProps().entrySet()) {
            output.addProp(prop.getKey(), prop.getValue());
        }
        return new Evolution(Evolution.Kind.APPEND, output.toString(), 0, input.getFullName());
    }

    private static Evolution onExisting(Schema input, Schema.Field existing, OnExistingField onExisting) {
        switch (onExisting) {
            case KEEP:
                return new Evolution(Evolution.Kind.KEEP, input.toString(), 0, input.getFullName());
            case OVERWRITE:
                if (existing.schema().getType() == Schema.Type.LONG) {
                    return new Evolution(Evolution.Kind.OVERWRITE, input.toString(), 0, input.getFullName());
                }
                throw new BadRecordException(Code.FIELD_EXISTS, "field '" + existing.name() + "' already exists as "
                        + describe(existing.schema()) + ", which an ID (a long) cannot overwrite");
            default:
                throw new BadRecordException(Code.FIELD_EXISTS, "field '" + existing.name()
                        + "' already exists in Avro record " + input.getFullName() + " (stamp.on-existing-field=reject)");
        }
    }

    /** Whether {@code schema} (below its top, for the record itself) reaches the named type {@code name}. */
    private static boolean refersTo(String name, Schema schema, Set<String> seen, boolean nested) {
        switch (schema.getType()) {
            case RECORD:
                if (nested && schema.getFullName().equals(name)) {
                    return true;
                }
                if (!seen.add(schema.getFullName())) {
                    return false;
                }
                for (Schema.Field f : schema.getFields()) {
                    if (refersTo(name, f.schema(), seen, true)) {
                        return true;
                    }
                }
                return false;
            case UNION:
                for (Schema branch : schema.getTypes()) {
                    if (refersTo(name, branch, seen, true)) {
                        return true;
                    }
                }
                return false;
            case ARRAY:
                return refersTo(name, schema.getElementType(), seen, true);
            case MAP:
                return refersTo(name, schema.getValueType(), seen, true);
            default:
                return false;
        }
    }

    static Schema parse(String schemaText) {
        try {
            return new Schema.Parser().parse(schemaText);
        } catch (AvroRuntimeException e) {     // SchemaParseException among them
            throw new BadRecordException(Code.INVALID_SCHEMA, "the value's Avro schema does not parse: " + e.getMessage());
        }
    }

    private static String describe(Schema schema) {
        return schema.getType() == Schema.Type.UNION ? "a union " + schema : "of type " + schema.getType().getName();
    }
}
