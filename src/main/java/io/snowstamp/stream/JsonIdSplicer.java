package io.snowstamp.stream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.state.IdHeader;
import io.snowstamp.stream.BadRecordException.Code;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;

/**
 * Injects the ID into a JSON object value as its first member, keeping every other byte of the
 * original (formatting, number spelling, member order). The value is validated by a streaming
 * parse first — no tree is built and nothing is re-serialized — and refused with a
 * {@link BadRecordException} when it is not one well-formed JSON object, or already has the field
 * and the policy is {@code reject}.
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
        // Duplicate keys anywhere make the record ambiguous for every consumer: they are refused, by MemberNames
        // rather than Jackson's STRICT_DUPLICATE_DETECTION, whose HashSet per object was a tenth of JSON mode's
        // allocations (profiled, see benchmarks.md); same rule: equal names after unescaping, at every depth.
        this.factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(maxDepth).build())
                .build();
        this.field = field;
        this.quoted = type == JsonType.STRING;
        this.onExisting = onExisting;
        String name = new String(JsonStringEncoder.getInstance().quoteAsString(field));
        this.memberPrefix = ("\"" + name + "\":" + (quoted ? "\"" : "")).getBytes(StandardCharsets.UTF_8);
    }

    /** Validates the value and finds where the ID goes. */
    public Plan inspect(byte[] value) {
        if (value == null) {
            throw new BadRecordException(Code.NOT_OBJECT, "value is null (a tombstone), not a JSON object");
        }
        try (JsonParser parser = factory.createParser(value)) {
            JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw new BadRecordException(Code.NOT_OBJECT, "value is " + describe(first) + ", not a JSON object");
            }
            int openBrace = (int) parser.currentTokenLocation().getByteOffset();
            if (openBrace < 0 || value[openBrace] != '{') {
                // Jackson also reads UTF-16/32, but then has no byte offsets: the splice would mangle the value
                throw new BadRecordException(Code.NOT_JSON, "value is not UTF-8 encoded JSON");
            }
            int members = 0;
            int existingFrom = -1;
            int existingTo = -1;
            boolean existingIsLast = false;
            JsonToken token;
            MemberNames names = new MemberNames();
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
                members++;
                String name = parser.currentName();
                names.add(name);
                // a location is an allocation: asked for only around the existing field, not for every member
                if (existingFrom >= 0 && existingTo < 0) {
                    existingTo = (int) parser.currentTokenLocation().getByteOffset();   // existing member runs up to the next name
                } else if (existingFrom < 0 && field.equals(name)) {
                    existingFrom = (int) parser.currentTokenLocation().getByteOffset(); // only once: duplicates are refused
                }
                skipValue(parser, parser.nextToken());
            }
            if (token != JsonToken.END_OBJECT) {
                throw new BadRecordException(Code.NOT_JSON, "value is not well-formed JSON");
            }
            int closeBrace = existingTo < 0 && existingFrom >= 0 ? (int) parser.currentTokenLocation().getByteOffset() : -1;
            if (parser.nextToken() != null) {
                throw new BadRecordException(Code.TRAILING_CONTENT, "value has content after the JSON object");
            }
            if (existingFrom < 0) {
                return new Plan(openBrace, -1, -1, members > 0, false);
            }
            return switch (onExisting) {
                case REJECT -> throw new BadRecordException(Code.FIELD_EXISTS,
                        "field '" + field + "' already exists (stamp.on-existing-field=reject)");
                case KEEP -> KEEP;
                case OVERWRITE -> {
                    if (existingTo < 0) {                   // the last member: also drop the comma before it
                        existingTo = closeBrace;
                        existingIsLast = true;
                    }
                    int from = existingIsLast ? commaBefore(value, existingFrom, openBrace) : existingFrom;
                    yield new Plan(openBrace, from, existingTo, members > 1, false);
                }
            };
        } catch (StreamConstraintsException e) {
            throw new BadRecordException(e.getMessage().contains("nesting depth") ? Code.TOO_DEEP : Code.LIMIT_EXCEEDED,
                    "value exceeds a JSON limit: " + e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            throw new BadRecordException(codeOf(e), "value is not well-formed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRecordException(Code.NOT_JSON, "value cannot be read as JSON: " + e.getMessage());
        }
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

    /**
     * Skips the value the parser has just read the first token of, refusing duplicate member names in
     * every object inside it. Iterative: the depth is bounded by the parser's nesting limit, not the stack.
     */
    private static void skipValue(JsonParser parser, JsonToken first) throws IOException {
        if (first != JsonToken.START_OBJECT && first != JsonToken.START_ARRAY) {
            return;     // a scalar: read whole already (a string's content is checked when skipped past)
        }
        ArrayList<MemberNames> open = new ArrayList<>();     // null for an array
        open.add(first == JsonToken.START_OBJECT ? new MemberNames() : null);
        while (!open.isEmpty()) {
            JsonToken token = parser.nextToken();
            if (token == null) {
                throw new BadRecordException(Code.TRUNCATED, "value is not well-formed JSON: unexpected end-of-input");
            }
            switch (token) {
                case FIELD_NAME -> open.get(open.size() - 1).add(parser.currentName());
                case START_OBJECT -> open.add(new MemberNames());
                case START_ARRAY -> open.add(null);
                case END_OBJECT, END_ARRAY -> open.remove(open.size() - 1);
                default -> {
                }
            }
        }
    }

    /**
     * The member names of one object so far. A few names are compared one by one (objects in events are
     * small); past {@link #LINEAR} they go to an open-addressing table of the names themselves (no entry
     * objects: {@code HashSet}'s node per name and its resizes were ~30% of checking a 4 KiB event of 200
     * members, profiled, see benchmarks.md). Names that collide on purpose ({@code String.hashCode} is easy
     * to collide) make long probe runs: past {@link #MAX_PROBE} the names move to a {@code HashSet}, whose
     * bins turn into trees under collisions, so a hostile object still costs n log n, not n squared.
     */
    private static final class MemberNames {
        private static final int LINEAR = 16;
        private static final int MAX_PROBE = 16;
        private String[] names;
        private int count;
        /** Open addressing, linear probing, at most half full; null until past {@link #LINEAR} names. */
        private String[] table;
        private HashSet<String> many;

        void add(String name) {
            if (table != null || many != null) {
                insert(name);
                return;
            }
            for (int i = 0; i < count; i++) {
                if (names[i].equals(name)) {
                    throw duplicate(name);
                }
            }
            if (count == LINEAR) {
                table = new String[4 * LINEAR];
                count = 0;
                for (String known : names) {
                    if (!place(known)) {
                        many = new HashSet<>(Arrays.asList(names));
                        table = null;
                        break;
                    }
                }
                names = null;
                insert(name);
                return;
            }
            if (names == null) {
                names = new String[LINEAR];
            }
            names[count++] = name;
        }

        private void insert(String name) {
            if (table != null && 2 * (count + 1) > table.length) {
                grow();
            }
            if (table != null) {
                if (place(name)) {
                    return;
                }
                many = all(table);
                table = null;
            }
            if (!many.add(name)) {
                throw duplicate(name);
            }
        }

        private void grow() {
            String[] old = table;
            table = new String[2 * old.length];
            count = 0;
            for (String known : old) {
                if (known != null && !place(known)) {
                    many = all(old);
                    table = null;
                    return;
                }
            }
        }

        /** Puts a name in the table; false, changing nothing, when its probe run would grow too long. */
        private boolean place(String name) {
            int mask = table.length - 1;
            // Fibonacci hashing, the product's top bits: names like f10, f11, ... have consecutive hashes, which
            // linear probing would pile into one long run; the multiplication spreads them over the table
            int i = name.hashCode() * 0x9E3779B9 >>> Integer.numberOfLeadingZeros(mask);
            for (int probe = 0; table[i] != null; probe++) {
                if (table[i].equals(name)) {
                    throw duplicate(name);
                }
                if (probe == MAX_PROBE) {
                    return false;
                }
                i = (i + 1) & mask;
            }
            table[i] = name;
            count++;
            return true;
        }

        private static HashSet<String> all(String[] table) {
            HashSet<String> set = new HashSet<>();
            for (String name : table) {
                if (name != null) {
                    set.add(name);
                }
            }
            return set;
        }

        private static BadRecordException duplicate(String name) {
            // Jackson's wording, which the tests and the dead-letter reasons have always shown
            return new BadRecordException(Code.DUPLICATE_KEY, "value is not well-formed JSON: Duplicate field '" + name + "'");
        }
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
