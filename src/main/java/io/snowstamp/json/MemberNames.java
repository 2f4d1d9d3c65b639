package io.snowstamp.json;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;

import java.util.HashSet;

/**
 * The member names of a value's top-level object so far, refusing a name seen before. Names below the top
 * level are not kept: duplicates there are legal JSON syntax whose meaning RFC 8259 leaves to the reader,
 * and the splice never touches them.
 *
 * <p>An open-addressing table of the names themselves, at most half full (no entry objects: a
 * {@code HashSet}'s node per name was most of checking an event of hundreds of members). Jackson hands
 * out one canonical {@code String} per name, whose hash is computed once and cached, so a probe compares
 * cached hashes and rarely the characters. Names that collide on purpose ({@code String.hashCode} is easy
 * to collide) make long probe runs: past {@link #MAX_PROBE} the names move to a {@code HashSet}, whose
 * bins turn into trees under collisions, so a hostile object still costs n log n, not n squared.
 */
public final class MemberNames {
    private static final int MAX_PROBE = 16;
    private static final int FIRST_TABLE_MAX = 1024;

    private String[] table;
    private int count;
    private HashSet<String> many;

    /** @param valueBytes the value's length: events have a member every ~20 bytes, so few tables ever grow */
    public MemberNames(int valueBytes) {
        table = new String[Math.min(FIRST_TABLE_MAX, Math.max(16, Integer.highestOneBit(Math.max(1, valueBytes / 10)) * 2))];
    }

    public void add(String name) {
        if (table != null) {
            if (2 * (count + 1) > table.length) {
                grow();
            }
            if (table != null && place(name)) {
                return;
            }
            if (table != null) {
                many = all(table);
                table = null;
            }
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
        int hash = name.hashCode();
        int mask = table.length - 1;
        // Fibonacci hashing, the product's top bits: names like f10, f11, ... have consecutive hashes, which
        // linear probing would pile into one long run; the multiplication spreads them over the table
        int i = hash * 0x9E3779B9 >>> Integer.numberOfLeadingZeros(mask);
        for (int probe = 0; table[i] != null; probe++) {
            String known = table[i];
            if (known.hashCode() == hash && known.equals(name)) {
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
