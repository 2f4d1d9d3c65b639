package io.snowstamp.stream;

import java.nio.charset.StandardCharsets;

/**
 * Decimal ASCII digits of a long, straight into a byte array: the per-record header and JSON
 * splice need bytes, and {@code Long.toString(v).getBytes(US_ASCII)} built and copied a String
 * first — half of the stamper's own time per record in the profile of {@code bench}.
 */
public final class Decimal {
    private Decimal() {
    }

    /** The digits of {@code value}, with a leading {@code -} when negative; same bytes as {@code Long.toString}. */
    public static byte[] ascii(long value) {
        if (value < 0) {
            return Long.toString(value).getBytes(StandardCharsets.US_ASCII);   // not an ID; the rare path may be slow
        }
        byte[] out = new byte[digits(value)];
        append(value, out, out.length);
        return out;
    }

    /** {@code prefix} followed by the digits of the non-negative {@code value}. */
    public static byte[] ascii(byte[] prefix, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative: " + value);
        }
        byte[] out = new byte[prefix.length + digits(value)];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        append(value, out, out.length);
        return out;
    }

    /** How many digits the non-negative {@code value} has. */
    static int digits(long value) {
        int n = 1;
        for (long limit = 10; n < 19 && value >= limit; limit *= 10) {
            n++;
        }
        return n;
    }

    /** Writes the digits of the non-negative {@code value} so that the last one lands at {@code end - 1}. */
    private static void append(long value, byte[] out, int end) {
        int pos = end;
        long v = value;
        do {
            long q = v / 10;
            out[--pos] = (byte) ('0' + (v - q * 10));
            v = q;
        } while (v != 0);
    }
}
