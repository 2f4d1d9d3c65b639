package io.snowstamp.json;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Whether bytes are well-formed UTF-8 as RFC 3629 defines it (which RFC 8259 requires of JSON text): no
 * overlong forms, no surrogates (U+D800-DFFF), nothing beyond U+10FFFF. Jackson's tokenizer checks the
 * shape of each sequence (a lead byte, then the right number of continuation bytes) but lets those three
 * through in strings it skips, so JSON mode checks them here. Pure ASCII, what most events are, costs one
 * pass of 8-byte loads.
 */
public final class Utf8 {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private Utf8() {
    }

    /** The offset of the first ill-formed sequence, or -1 when all of {@code bytes} is well-formed UTF-8. */
    public static int firstInvalid(byte[] bytes) {
        return firstInvalid(bytes, 0);
    }

    /** As {@link #firstInvalid(byte[])}, from offset {@code from} on (a frame's header before it is not text). */
    public static int firstInvalid(byte[] bytes, int from) {
        int i = firstNonAscii(bytes, from);
        while (i < bytes.length) {
            int b = bytes[i];
            if (b >= 0) {
                i++;
                continue;
            }
            int length = sequence(bytes, i, b & 0xFF);
            if (length == 0) {
                return i;
            }
            i += length;
        }
        return -1;
    }

    /**
     * Where the first byte >= 0x80 is, or the length. Eight bytes per load, 32 per test: a byte at a time this
     * scan cost half as much as Jackson's whole tokenizer (JsonCheckBenchmark).
     */
    private static int firstNonAscii(byte[] bytes, int from) {
        int i = from;
        for (int end = bytes.length - 31; i < end; i += 32) {
            long any = (long) LONGS.get(bytes, i) | (long) LONGS.get(bytes, i + 8)
                    | (long) LONGS.get(bytes, i + 16) | (long) LONGS.get(bytes, i + 24);
            if ((any & 0x8080808080808080L) != 0) {
                break;
            }
        }
        while (i < bytes.length && bytes[i] >= 0) {
            i++;
        }
        return i;
    }

    /**
     * The length of the well-formed sequence starting with lead byte {@code lead} at {@code i}, or 0. The
     * second byte's range depends on the lead (RFC 3629, section 4): that is what rules out overlong forms,
     * surrogates and code points beyond U+10FFFF.
     */
    private static int sequence(byte[] bytes, int i, int lead) {
        int length;
        int low = 0x80;
        int high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) {
                low = 0xA0;                 // below: overlong
            } else if (lead == 0xED) {
                high = 0x9F;                // above: surrogates
            }
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) {
                low = 0x90;                 // below: overlong
            } else if (lead == 0xF4) {
                high = 0x8F;                // above: beyond U+10FFFF
            }
        } else {
            return 0;                       // a continuation byte, C0/C1 (overlong) or F5-FF
        }
        if (i + length > bytes.length) {
            return 0;
        }
        int second = bytes[i + 1] & 0xFF;
        if (second < low || second > high) {
            return 0;
        }
        for (int k = 2; k < length; k++) {
            if ((bytes[i + k] & 0xC0) != 0x80) {
                return 0;
            }
        }
        return length;
    }
}
