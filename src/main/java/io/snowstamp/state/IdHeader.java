package io.snowstamp.state;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import java.nio.charset.StandardCharsets;

/**
 * The snowstamp record headers and the one codec of the {@code snowstamp-id} header: the decimal
 * ASCII digits of a non-negative long, no sign, no padding, no whitespace.
 *
 * <p>Everything that writes or reads these headers — the stamper, the sequence numberer, the tail
 * guard, the offline scans, {@code consume}, {@code verify} — uses this class, so the format has one
 * definition (both formats: {@code stamp.header-format}). A layer below {@code stream}, {@code sequence}, {@code recovery},
 * {@code verify} and {@code cli}.
 *
 * <p>{@link #parse} is strict, it takes exactly what {@link #ascii} writes: empty input, a sign, any byte but
 * {@code 0-9}, a leading zero (padding: {@code 007}; {@code 0} alone is zero), or a value above
 * {@link Long#MAX_VALUE} is refused with {@link MalformedIdHeaderException}. Readers that treat such
 * a record as "not stamped" catch it at their call site, where that decision belongs.
 */
public final class IdHeader {
    /** Header carrying the ID (or a sequence number), decimal ASCII. */
    public static final String ID = "snowstamp-id";
    /** Provenance header: {@code topic/partition/offset} of the input record. */
    public static final String SOURCE = "snowstamp-src";
    /** Machine-readable reason on dead-letter records: a {@code BadRecordException.Code} as a word ({@code not-object}). */
    public static final String ERROR = "snowstamp-error";
    /** The tag a sequence-mode record was numbered under (UTF-8), next to its number in {@link #ID}. */
    public static final String TAG = "snowstamp-tag";
    /**
     * Compact format ({@code stamp.header-format=compact}): the ID in 8 bytes, big-endian two's complement — what
     * Kafka's {@code LongSerializer} and Kafka Connect's {@code LongConverter} write and read. Instead of {@link #ID}.
     */
    public static final String COMPACT_ID = "snowid";
    /**
     * Compact format: the input record's offset in 8 bytes, big-endian. Its topic is the stamper's input topic and
     * its partition the stamped record's own (output partition p holds input partition p). Instead of {@link #SOURCE}.
     */
    public static final String COMPACT_SOURCE = "snowsrc";
    private static final int LONG_BYTES = 8;

    private IdHeader() {
    }

    /** A header value that is not the decimal digits of a non-negative long. */
    public static final class MalformedIdHeaderException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        MalformedIdHeaderException(String message) {
            super(message);
        }
    }

    // ---- reading -------------------------------------------------------------------------

    /**
     * The value of a {@code snowstamp-id} header.
     *
     * @throws MalformedIdHeaderException when {@code header} is null, empty, holds anything but ASCII
     *                                    digits, starts with a padding zero, or exceeds {@link Long#MAX_VALUE}
     */
    public static long parse(byte[] header) {
        if (header == null) {
            throw new MalformedIdHeaderException("snowstamp-id header has no value; expected decimal digits");
        }
        // ISO-8859-1 maps each byte to one char, so a non-ASCII byte never reads as a digit
        return parse(new String(header, StandardCharsets.ISO_8859_1));
    }

    /**
     * The decimal number in {@code text[from, to)}, with the rules of {@link #parse(byte[])}: for
     * headers already decoded to text, and for the numeric fields of {@code snowstamp-src}.
     *
     * @throws MalformedIdHeaderException when the range is empty, holds anything but ASCII digits, starts
     *                                    with a padding zero, or exceeds {@link Long#MAX_VALUE}
     */
    public static long parse(CharSequence text, int from, int to) {
        long value = digits(text, from, to);
        if (value < 0) {
            throw malformed(text.subSequence(from, Math.max(from, to)).toString());
        }
        return value;
    }

    /** The value of {@code text}, with the rules of {@link #parse(byte[])}. */
    public static long parse(CharSequence text) {
        return parse(text, 0, text.length());
    }

    /** -1 when not digits, padded or too large: no exception inside the loop. */
    private static long digits(CharSequence text, int from, int to) {
        if (from >= to || text.charAt(from) == '0' && to - from > 1) {
            return -1;      // the writer never pads: "007" is not what it wrote for 7
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            int digit = text.charAt(i) - '0';
            if (digit < 0 || digit > 9 || value > (Long.MAX_VALUE - digit) / 10) {
                return -1;
            }
            value = value * 10 + digit;
        }
        return value;
    }

    private static MalformedIdHeaderException malformed(String text) {
        String shown = text.length() <= 40 ? text : text.substring(0, 40) + "...";
        return new MalformedIdHeaderException("snowstamp-id header \"" + shown
                + "\" is not a decimal number; expected the digits 0-9 of a value from 0 to " + Long.MAX_VALUE + ", without padding zeros");
    }

    /**
     * The value of a compact-format header ({@link #COMPACT_ID}, {@link #COMPACT_SOURCE}).
     *
     * @throws MalformedIdHeaderException unless {@code value} is 8 bytes holding a non-negative long
     */
    public static long parseBinary(byte[] value) {
        if (value == null || value.length != LONG_BYTES) {
            throw new MalformedIdHeaderException("compact header has " + (value == null ? "no value" : value.length + " bytes")
                    + "; expected 8 bytes, a big-endian number");
        }
        long v = 0;
        for (byte b : value) {
            v = v << 8 | (b & 0xff);
        }
        if (v < 0) {
            throw new MalformedIdHeaderException("compact header holds the negative number " + v + "; IDs and offsets are >= 0");
        }
        return v;
    }

    /**
     * The ID of a stamped record in either format: the value of the LAST {@link #ID} or {@link #COMPACT_ID} header.
     * The last, because the stamper appends its ID header after the input record's headers, which it keeps
     * (an input that was stamped before carries an ID of its own).
     *
     * @return the ID, or -1 when the record has neither header
     * @throws MalformedIdHeaderException when that header's value is not an ID in its format
     */
    public static long idOf(Headers headers) {
        Header header = last(headers, ID, COMPACT_ID);
        if (header == null) {
            return -1;
        }
        return header.key().equals(ID) ? parse(header.value()) : parseBinary(header.value());
    }

    /**
     * The ID header's value as text, for reports: the decimal digits in either format (a malformed compact value
     * as {@code 0x}-hex, which {@link #parse} refuses); null when the record has neither header.
     */
    public static String idText(Headers headers) {
        Header header = last(headers, ID, COMPACT_ID);
        if (header == null || header.value() == null) {
            return null;
        }
        return header.key().equals(ID) ? new String(header.value(), StandardCharsets.ISO_8859_1) : binaryText(header.value());
    }

    /**
     * The provenance, {@code topic/partition/offset}, in either format; a compact one names {@code inputTopic} and
     * {@code partition} (the stamped record's). Null when the record has neither header.
     */
    public static String sourceText(Headers headers, String inputTopic, int partition) {
        Header header = last(headers, SOURCE, COMPACT_SOURCE);
        if (header == null || header.value() == null) {
            return null;
        }
        if (header.key().equals(SOURCE)) {
            return new String(header.value(), StandardCharsets.UTF_8);
        }
        return inputTopic + "/" + partition + "/" + binaryText(header.value());
    }

    private static String binaryText(byte[] value) {
        try {
            return Long.toString(parseBinary(value));
        } catch (MalformedIdHeaderException e) {
            return "0x" + java.util.HexFormat.of().formatHex(value);
        }
    }

    /** The last header named {@code a} or {@code b}, or null. */
    private static Header last(Headers headers, String a, String b) {
        Header found = null;
        for (Header header : headers) {
            if (header.key().equals(a) || header.key().equals(b)) {
                found = header;
            }
        }
        return found;
    }

    // ---- writing -------------------------------------------------------------------------

    /** The 8 big-endian bytes of {@code value}: a compact-format header value. */
    public static byte[] binary(long value) {
        byte[] out = new byte[LONG_BYTES];
        for (int i = LONG_BYTES - 1; i >= 0; i--) {
            out[i] = (byte) value;
            value >>>= 8;
        }
        return out;
    }

    // Straight into a byte array: the per-record header and JSON splice need bytes, and
    // Long.toString(v).getBytes(US_ASCII) built and copied a String first — half of the stamper's
    // own time per record in the profile of `bench`.

    /** The digits of {@code value}, with a leading {@code -} when negative; same bytes as {@code Long.toString}. */
    public static byte[] ascii(long value) {
        if (value < 0) {
            return Long.toString(value).getBytes(StandardCharsets.US_ASCII);   // not an ID; the rare path may be slow
        }
        byte[] out = new byte[digitCount(value)];
        append(value, out, out.length);
        return out;
    }

    /** {@code prefix} followed by the digits of the non-negative {@code value} (the {@code snowstamp-src} header). */
    public static byte[] ascii(byte[] prefix, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative: " + value);
        }
        byte[] out = new byte[prefix.length + digitCount(value)];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        append(value, out, out.length);
        return out;
    }

    /** How many digits the non-negative {@code value} has (IDs have 18-19: counted from the top). */
    static int digitCount(long value) {
        int n = 19;
        for (long limit = 1_000_000_000_000_000_000L; n > 1 && value < limit; limit /= 10) {
            n--;
        }
        return n;
    }

    /** "00" "01" ... "99": two digits per division, half the divisions of one at a time. */
    private static final byte[] DIGIT_PAIRS = new byte[200];

    static {
        for (int i = 0; i < 100; i++) {
            DIGIT_PAIRS[2 * i] = (byte) ('0' + i / 10);
            DIGIT_PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    /** Writes the digits of the non-negative {@code value} so that the last one lands at {@code end - 1}. */
    private static void append(long value, byte[] out, int end) {
        int pos = end;
        long v = value;
        while (v >= 100) {
            long q = v / 100;
            int r = (int) (v - q * 100) * 2;
            out[--pos] = DIGIT_PAIRS[r + 1];
            out[--pos] = DIGIT_PAIRS[r];
            v = q;
        }
        if (v >= 10) {
            int r = (int) v * 2;
            out[--pos] = DIGIT_PAIRS[r + 1];
            out[--pos] = DIGIT_PAIRS[r];
        } else {
            out[--pos] = (byte) ('0' + v);
        }
    }
}
