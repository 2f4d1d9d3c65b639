package io.snowstamp.stream;

import io.snowstamp.state.IdHeader;

/**
 * The stamping path's name for {@link IdHeader#ascii}: kept so {@code StampProcessor}'s calls stay
 * as they are; the codec itself lives in {@link IdHeader}. Static one-line delegates, inlined by the JIT.
 */
public final class Decimal {
    private Decimal() {
    }

    /** See {@link IdHeader#ascii(long)}. */
    public static byte[] ascii(long value) {
        return IdHeader.ascii(value);
    }

    /** See {@link IdHeader#ascii(byte[], long)}. */
    public static byte[] ascii(byte[] prefix, long value) {
        return IdHeader.ascii(prefix, value);
    }
}
