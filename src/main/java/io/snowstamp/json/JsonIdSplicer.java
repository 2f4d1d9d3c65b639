package io.snowstamp.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.snowstamp.BadRecordException;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.state.IdHeader;
import io.snowstamp.BadRecordException.Code;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Injects the ID into a JSON object value as its first member, keeping every other byte of the
 * original (formatting, number spelling, member order). The value is validated by a streaming
 * parse first — no tree is built and nothing is re-serialized — and refused with a
 * {@link BadRecordException} when it is not one well-formed JSON object (every byte checked, UTF-8
 * included), has a top-level name twice, or already has the field at the top level and the policy is
 * {@code reject}. A name twice in a nested object passes: legal syntax, left to the reader by RFC 8259,
 * and never touched by the splice.
 *
 * <p>Use: {@link #inspect} (may throw; issues no ID), then {@link #write} with the new ID.
 * Thread-safe: it holds only immutable configuration.
 */
public final class JsonIdSplicer {
    private final JsonFactory factory;

    private final String field;
    private final byte[] memberPrefix;   // "field":   or   "field":"
    private final boolean quoted;
    private final OnExistingField onExisting;

    /**
     * Where to write: insert after {@code openBrace}; if {@code removeFrom >= 0}, drop bytes
     * {@code [removeFrom, removeTo)} (the existing member); {@code othersRemain} tells whether a
     * comma must follow the new member. {@code skip} means keep the value as it is.
     */
    public record Plan(int openBrace, int removeFrom, int removeTo, boolean othersRemain, boolean skip) {
    }

    private static final Plan KEEP = new Plan(-1, -1, -1, false, true);

    /** The splicer the {@code stamp.*} keys ask for, or null when the ID goes in the header only (no {@code stamp.json-field}). */
    public static JsonIdSplicer of(StampSettings stamp) {
        return stamp.jsonField() == null ? null
                : new JsonIdSplicer(stamp.jsonField(), stamp.jsonType(), stamp.onExistingField(), stamp.maxDepth());
    }

    /** @param maxDepth deepest nesting of objects and arrays accepted ({@code stamp.max-depth}) */
    public JsonIdSplicer(String field, JsonType type, OnExistingField onExisting, int maxDepth) {
        // Duplicate top-level names are refused by MemberNames rather than Jackson's STRICT_DUPLICATE_DETECTION,
        // which keeps a HashSet per object at every depth; same rule: equal names after unescaping.
        this.factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(maxDepth).build())
                .build();
        this.field = field;
        this.quoted = type == JsonType.STRING;
        this.onExisting = onExisting;
        String name = new String(JsonStringEncoder.getInstance().quoteAsString(field));
        this.memberPrefix = ("\"" + name + "\":" + (quoted ? "\"" : "")).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Validates the value and finds where the ID goes. One pass of Jackson's tokenizer over the bytes: the
     * top-level names are read (the field, and duplicates among them); what lies below the top level is only
     * tokenized, which checks its syntax, strings, escapes, numbers and nesting depth all the same. Then the
     * UTF-8 rules Jackson's tokenizer leaves out ({@link Utf8}).
     */
    public Plan inspect(byte[] value) {
        return inspect(value, 0);
    }

    /**
     * As {@link #inspect(byte[])} for the JSON text from offset {@code from} on (JSON Schema values: after the schema
     * registry's 5-byte frame, which is not checked); the plan's positions are the whole array's.
     */
    public Plan inspect(byte[] value, int from) {
        if (value == null) {
            throw new BadRecordException(Code.NOT_OBJECT, "value is null (a tombstone), not a JSON object");
        }
        // Jackson counts its byte offsets from the start of the text it is given: each one below is shifted by from
        try (JsonParser parser = factory.createParser(value, from, value.length - from)) {
            JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw new BadRecordException(Code.NOT_OBJECT, "value is " + describe(first) + ", not a JSON object");
            }
            long brace = parser.currentTokenLocation().getByteOffset();
            int openBrace = brace < 0 ? -1 : (int) brace + from;
            if (openBrace < 0 || value[openBrace] != '{') {
                // Jackson also reads UTF-16/32, but then has no byte offsets: the splice would mangle the value
                throw new BadRecordException(Code.NOT_JSON, "value is not UTF-8 encoded JSON");
            }
            int members = 0;
            int existingFrom = -1;
            int existingTo = -1;
            MemberNames names = new MemberNames(value.length);
            String name;
            while ((name = parser.nextFieldName()) != null) {
                members++;
                names.add(name);
                // a location is an allocation: asked for only around the existing field, not for every member
                if (existingFrom >= 0 && existingTo < 0) {
                    existingTo = (int) parser.currentTokenLocation().getByteOffset() + from;   // existing member runs up to the next name
                } else if (existingFrom < 0 && field.equals(name)) {
                    existingFrom = (int) parser.currentTokenLocation().getByteOffset() + from; // only once: duplicates are refused
                }
                JsonToken member = parser.nextToken();
                if (member == JsonToken.START_OBJECT || member == JsonToken.START_ARRAY) {
                    parser.skipChildren();      // every token below is still read, and checked, by the tokenizer
                }
            }
            if (parser.currentToken() != JsonToken.END_OBJECT) {
                throw new BadRecordException(Code.NOT_JSON, "value is not well-formed JSON");
            }
            int closeBrace = existingTo < 0 && existingFrom >= 0 ? (int) parser.currentTokenLocation().getByteOffset() + from : -1;
            if (parser.nextToken() != null) {
                throw new BadRecordException(Code.TRAILING_CONTENT, "value has content after the JSON object");
            }
            int invalid = Utf8.firstInvalid(value, from);
            if (invalid >= 0) {
                throw new BadRecordException(Code.INVALID_UTF8, "value is not well-formed JSON: Invalid UTF-8 at byte " + invalid
                        + " (an overlong form, a surrogate or a code point beyond U+10FFFF)");
            }
            return existingFrom < 0 ? new Plan(openBrace, -1, -1, members > 0, false)
                    : existing(value, openBrace, existingFrom, existingTo, closeBrace, members);
        } catch (StreamConstraintsException e) {
            throw new BadRecordException(e.getMessage().contains("nesting depth") ? Code.TOO_DEEP : Code.LIMIT_EXCEEDED,
                    "value exceeds a JSON limit: " + e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            throw new BadRecordException(codeOf(e), "value is not well-formed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRecordException(Code.NOT_JSON, "value cannot be read as JSON: " + e.getMessage());
        }
    }

    /** The plan for a value that has the field at the top level, as {@code stamp.on-existing-field} says. */
    private Plan existing(byte[] value, int openBrace, int existingFrom, int existingTo, int closeBrace, int members) {
        return switch (onExisting) {
            case REJECT -> throw new BadRecordException(Code.FIELD_EXISTS,
                    "field '" + field + "' already exists (stamp.on-existing-field=reject)");
            case KEEP -> KEEP;
            case OVERWRITE -> existingTo >= 0 ? new Plan(openBrace, existingFrom, existingTo, members > 1, false)
                    // the last member: also drop the comma before it
                    : new Plan(openBrace, commaBefore(value, existingFrom, openBrace), closeBrace, members > 1, false);
        };
    }

    /** The value with the ID spliced in as planned; the value itself when the plan says keep. */
    public byte[] write(byte[] value, Plan plan, long id) {
        return write(value, plan, IdHeader.ascii(id));
    }

    /** As {@link #write(byte[], Plan, long)}, with the ID's decimal digits already at hand (the header has them too). */
    public byte[] write(byte[] value, Plan plan, byte[] digits) {
        if (plan.skip()) {
            return value;
        }
        int removed = plan.removeFrom() < 0 ? 0 : plan.removeTo() - plan.removeFrom();
        int extra = memberPrefix.length + digits.length + (quoted ? 1 : 0) + (plan.othersRemain() ? 1 : 0);
        byte[] out = new byte[value.length - removed + extra];
        int head = plan.openBrace() + 1;
        System.arraycopy(value, 0, out, 0, head);
        int pos = head;
        System.arraycopy(memberPrefix, 0, out, pos, memberPrefix.length);
        pos += memberPrefix.length;
        System.arraycopy(digits, 0, out, pos, digits.length);
        pos += digits.length;
        if (quoted) {
            out[pos++] = '"';
        }
        if (plan.othersRemain()) {
            out[pos++] = ',';
        }
        if (plan.removeFrom() < 0) {
            System.arraycopy(value, head, out, pos, value.length - head);
        } else {
            int before = plan.removeFrom() - head;
            System.arraycopy(value, head, out, pos, before);
            pos += before;
            System.arraycopy(value, plan.removeTo(), out, pos, value.length - plan.removeTo());
        }
        return out;
    }

    /** A finer reason than "not JSON" where Jackson's message tells it (also for the sequence tag field reader). */
    public static Code codeOf(JsonProcessingException e) {
        String message = e.getOriginalMessage();
        if (message == null) {
            return Code.NOT_JSON;
        }
        if (message.startsWith("Invalid UTF-8") || message.contains("Invalid UTF-8")) {
            return Code.INVALID_UTF8;
        }
        if (message.startsWith("Duplicate field")) {
            return Code.DUPLICATE_KEY;
        }
        if (message.contains("end-of-input")) {
            return Code.TRUNCATED;
        }
        return Code.NOT_JSON;
    }

    /** Start of the comma (and blanks) preceding a last member, so no dangling comma remains. */
    private static int commaBefore(byte[] value, int memberStart, int openBrace) {
        int i = memberStart - 1;
        while (i > openBrace && isBlank(value[i])) {
            i--;
        }
        return value[i] == ',' ? i : memberStart;
    }

    private static boolean isBlank(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private static String describe(JsonToken token) {
        if (token == null) {
            return "empty";
        }
        return switch (token) {
            case START_ARRAY -> "a JSON array";
            case VALUE_STRING -> "a JSON string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a JSON number";
            case VALUE_TRUE, VALUE_FALSE -> "a JSON boolean";
            case VALUE_NULL -> "JSON null";
            default -> "not a JSON object";
        };
    }
}
