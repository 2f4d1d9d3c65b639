package io.snowstamp.stream;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DecimalTest {
    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    @Test
    void shouldWriteTheSameDigitsAsLongToStringAtEveryLengthAndEdge() {
        long[] values = {0, 1, 9, 10, 11, 99, 100, 999_999_999, 1_000_000_000, 9_999_999_999_999_999L,
                999_999_999_999_999_999L, 1_000_000_000_000_000_000L, Long.MAX_VALUE, -1, -10, Long.MIN_VALUE};
        for (long v : values) {
            assertThat(text(Decimal.ascii(v))).as("%d", v).isEqualTo(Long.toString(v));
        }
        for (long p = 1; p > 0 && p <= Long.MAX_VALUE / 10; p *= 10) {
            assertThat(text(Decimal.ascii(p))).isEqualTo(Long.toString(p));
            assertThat(text(Decimal.ascii(p - 1))).isEqualTo(Long.toString(p - 1));
        }
    }

    @Test
    void shouldMatchLongToStringOnRandomIds() {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 100_000; i++) {
            long v = random.nextLong(Long.MAX_VALUE);
            assertThat(text(Decimal.ascii(v))).isEqualTo(Long.toString(v));
            assertThat(text(Decimal.ascii("t/3/".getBytes(StandardCharsets.US_ASCII), v))).isEqualTo("t/3/" + v);
        }
    }

    @Test
    void shouldRefuseANegativeValueAfterAPrefix() {
        assertThatThrownBy(() -> Decimal.ascii(new byte[0], -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
