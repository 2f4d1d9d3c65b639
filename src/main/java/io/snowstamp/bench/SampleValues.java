package io.snowstamp.bench;

import java.nio.charset.StandardCharsets;

/**
 * The records {@code bench} loads: keys spread over 1,000 users, and JSON order events padded to a
 * value size. Pure and deterministic: record {@code n} is the same bytes in every run.
 *
 * <p>A padded event is the sample event with more string members, as larger events have: {@code "f0"},
 * {@code "f1"}, ... of one to three words each, then {@code "note"} filling it to exactly the size
 * asked for. The words are drawn from a fixed list by a generator seeded with {@code n}, so the
 * padding compresses about as well as text does (lz4 ~2x on JSON events), neither as well as a run of
 * one byte (which would flatter every case that writes more bytes) nor as badly as random bytes; and a
 * JSON parser meets a member every ~20 bytes, not one long string it can skip. The value stays one JSON object with no {@code id} member, so JSON mode splices
 * every record. A size below the sample's own length (~85 bytes) leaves the sample as it is: that is
 * what {@code --value-bytes 80} means.
 */
public final class SampleValues {
    /** The smallest value size: the unpadded sample event. */
    public static final int SAMPLE_BYTES = 80;

    private static final byte[][] WORDS = words("order", "shipped", "parcel", "warehouse", "berlin", "lisbon", "express",
        "standard", "returned", "paid", "card", "invoice", "customer", "priority", "gift", "wrapped", "north", "south",
        "delayed", "on", "time", "blue", "large", "small", "item", "box", "signed", "door", "locker", "tracking", "hub",
        "route");
    private static final byte[] NOTE = ",\"note\":\"".getBytes(StandardCharsets.US_ASCII);
    /** The most one padding member takes: ,"f9999":" and three of the longest words. */
    private static final int MEMBER_ROOM = 10 + 3 * 10;

    private SampleValues() {
    }

    /** The key of record {@code n}: one of 1,000 users. */
    public static byte[] key(long n) {
        return ("user-" + user(n)).getBytes(StandardCharsets.UTF_8);
    }

    /** The sample event of record {@code n} (~85 bytes), unpadded. */
    public static byte[] sample(long n) {
        return ("{\"event\":\"order.created\",\"n\":" + n + ",\"user\":\"user-" + user(n)
                + "\",\"amount\":" + (n % 100_000) / 100.0 + ",\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The value of record {@code n}: the sample event padded to exactly {@code bytes} bytes; the sample itself
     * where it is already that long or longer.
     */
    public static byte[] value(long n, int bytes) {
        byte[] sample = sample(n);
        if (bytes < sample.length + NOTE.length + 1) {
            return sample;
        }
        byte[] out = new byte[bytes];
        int pos = sample.length - 1;                    // the sample without its closing brace
        System.arraycopy(sample, 0, out, 0, pos);
        int end = bytes - 2;                            // the note's closing quote and the object's brace
        long[] seed = {n * 0x9E3779B97F4A7C15L + 1};
        // members of one to three words, as events have, while a whole one and the note still fit
        for (int member = 0; pos + MEMBER_ROOM + NOTE.length < end; member++) {
            byte[] name = (",\"f" + member + "\":\"").getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(name, 0, out, pos, name.length);
            pos += name.length;
            int words = 1 + (int) (next(seed) % 3);
            for (int w = 0; w < words; w++) {
                byte[] word = WORDS[(int) (next(seed) % WORDS.length)];
                System.arraycopy(word, 0, out, pos, word.length);
                pos += word.length;
                out[pos++] = w + 1 < words ? (byte) ' ' : (byte) '"';
            }
        }
        System.arraycopy(NOTE, 0, out, pos, NOTE.length);
        pos += NOTE.length;
        while (pos < end) {                             // the note fills what is left, word by word
            byte[] word = WORDS[(int) (next(seed) % WORDS.length)];
            for (int i = 0; i < word.length && pos < end; i++) {
                out[pos++] = word[i];
            }
            if (pos < end) {
                out[pos++] = ' ';
            }
        }
        out[end] = '"';
        out[end + 1] = '}';
        return out;
    }

    /** xorshift64: cheap, and the same sequence for the same record in every run. */
    private static long next(long[] seed) {
        long x = seed[0];
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        seed[0] = x;
        return x >>> 33;
    }

    private static byte[][] words(String... words) {
        byte[][] bytes = new byte[words.length][];
        for (int i = 0; i < words.length; i++) {
            bytes[i] = words[i].getBytes(StandardCharsets.US_ASCII);
        }
        return bytes;
    }

    private static long user(long n) {
        return n * 7919 % 1000;
    }
}
