package io.snowstamp.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.snowstamp.state.IdHeader.MalformedIdHeaderException;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.junit.jupiter.api.Test;

class IdHeaderTest {
    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void shouldWriteTheSameDigitsAsLongToStringAtEveryLengthAndEdge() {
        long[] values = {0, 1, 9, 10, 11, 99, 100, 999_999_999, 1_000_000_000, 9_999_999_999_999_999L,
                999_999_999_999_999_999L, 1_000_000_000_000_000_000L, Long.MAX_VALUE, -1, -10, Long.MIN_VALUE};
        for (long v : values) {
            assertThat(text(IdHeader.ascii(v))).as("%d", v).isEqualTo(Long.toString(v));
        }
        for (long p = 1; p > 0 && p <= Long.MAX_VALUE / 10; p *= 10) {
            assertThat(text(IdHeader.ascii(p))).isEqualTo(Long.toString(p));
            assertThat(text(IdHeader.ascii(p - 1))).isEqualTo(Long.toString(p - 1));
        }
    }

    @Test
    void shouldRoundTripRandomIdsAndTheEdges() {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 100_000; i++) {
            long v = random.nextLong(Long.MAX_VALUE);
            assertThat(text(IdHeader.ascii(v))).isEqualTo(Long.toString(v));
            assertThat(IdHeader.parse(IdHeader.ascii(v))).isEqualTo(v);
            assertThat(text(IdHeader.ascii(bytes("t/3/"), v))).isEqualTo("t/3/" + v);
        }
        for (long v : new long[] {0, 9, 10, Long.MAX_VALUE - 1, Long.MAX_VALUE}) {
            assertThat(IdHeader.parse(IdHeader.ascii(v))).as("%d", v).isEqualTo(v);
            assertThat(IdHeader.parse(Long.toString(v))).as("%d", v).isEqualTo(v);
        }
    }

    /** README: "no sign or padding; the tools that read it take nothing else as an ID". */
    @Test
    void shouldRefuseLeadingZerosWhichTheWriterNeverWrites() {
        for (String padded : new String[] {"007", "00", "0000000000000000000000000000042", "09223372036854775807"}) {
            assertThatThrownBy(() -> IdHeader.parse(bytes(padded))).as(padded).isInstanceOf(MalformedIdHeaderException.class)
                    .hasMessageContaining("without padding zeros");
            assertThatThrownBy(() -> IdHeader.parse("t/" + padded + "/1", 2, 2 + padded.length())).as(padded)
                    .isInstanceOf(MalformedIdHeaderException.class);
        }
        assertThat(IdHeader.parse(bytes("0"))).isZero();
        assertThat(IdHeader.parse(bytes("70"))).isEqualTo(70);
    }

    @Test
    void shouldRefuseEverythingButTheDigitsOfANonNegativeLong() {
        String[] malformed = {"", "-1", "+1", " 1", "1 ", "1_000", "12a", "0x1F", "1.0", "٣",
                "9223372036854775808", "99999999999999999999", "18446744073709551615"};
        for (String text : malformed) {
            assertThatThrownBy(() -> IdHeader.parse(text.getBytes(StandardCharsets.UTF_8))).as("\"%s\"", text)
                    .isInstanceOf(MalformedIdHeaderException.class)
                    .hasMessageContaining("is not a decimal number; expected the digits 0-9 of a value from 0 to 9223372036854775807");
            assertThatThrownBy(() -> IdHeader.parse(text)).as("\"%s\"", text).isInstanceOf(MalformedIdHeaderException.class);
        }
        assertThatThrownBy(() -> IdHeader.parse((byte[]) null)).isInstanceOf(MalformedIdHeaderException.class)
                .hasMessage("snowstamp-id header has no value; expected decimal digits");
    }

    @Test
    void shouldReadARangeOfTextAndRefuseAnEmptyOne() {
        assertThat(IdHeader.parse("events/3/1234", 7, 8)).isEqualTo(3);
        assertThat(IdHeader.parse("events/3/1234", 9, 13)).isEqualTo(1234);
        assertThatThrownBy(() -> IdHeader.parse("events//1", 7, 7)).isInstanceOf(MalformedIdHeaderException.class);
        assertThatThrownBy(() -> IdHeader.parse("events/x/1", 7, 8)).hasMessageContaining("\"x\"");
    }

    @Test
    void shouldAbbreviateALongMalformedValueInTheMessage() {
        assertThatThrownBy(() -> IdHeader.parse("x".repeat(100))).hasMessageContaining("\"" + "x".repeat(40) + "...\"");
    }

    @Test
    void shouldRefuseANegativeValueAfterAPrefix() {
        assertThatThrownBy(() -> IdHeader.ascii(new byte[0], -1)).isInstanceOf(IllegalArgumentException.class);
    }

    // ---- compact format

    @Test
    void shouldWriteTheBytesOfKafkasLongSerializerAndReadThemBack() {
        long[] values = {0, 1, 255, 256, 912_580_224_758_055_065L, Long.MAX_VALUE};
        try (LongSerializer serializer = new LongSerializer(); LongDeserializer deserializer = new LongDeserializer()) {
            for (long v : values) {
                assertThat(IdHeader.binary(v)).as("%d", v).isEqualTo(serializer.serialize("t", v));
                assertThat(IdHeader.parseBinary(IdHeader.binary(v))).isEqualTo(v);
                assertThat(deserializer.deserialize("t", IdHeader.binary(v))).isEqualTo(v);
            }
        }
    }

    @Test
    void shouldRefuseACompactValueOfAnotherLengthOrNegative() {
        assertThatThrownBy(() -> IdHeader.parseBinary(new byte[7])).isInstanceOf(MalformedIdHeaderException.class)
                .hasMessageContaining("7 bytes; expected 8 bytes");
        assertThatThrownBy(() -> IdHeader.parseBinary(null)).isInstanceOf(MalformedIdHeaderException.class);
        assertThatThrownBy(() -> IdHeader.parseBinary(IdHeader.binary(-5))).isInstanceOf(MalformedIdHeaderException.class)
                .hasMessageContaining("negative");
    }

    @Test
    void shouldReadTheLastIdHeaderOfEitherFormat() {
        assertThat(IdHeader.idOf(new RecordHeaders())).isEqualTo(-1);
        assertThat(IdHeader.idText(new RecordHeaders())).isNull();
        RecordHeaders textThenCompact = new RecordHeaders();
        textThenCompact.add(IdHeader.ID, bytes("42")).add(IdHeader.COMPACT_ID, IdHeader.binary(77));
        assertThat(IdHeader.idOf(textThenCompact)).isEqualTo(77);
        assertThat(IdHeader.idText(textThenCompact)).isEqualTo("77");
        RecordHeaders compactThenText = new RecordHeaders();
        compactThenText.add(IdHeader.COMPACT_ID, IdHeader.binary(77)).add(IdHeader.ID, bytes("42"));
        assertThat(IdHeader.idOf(compactThenText)).isEqualTo(42);
        RecordHeaders malformed = new RecordHeaders();
        malformed.add(IdHeader.COMPACT_ID, new byte[] {1, 2});
        assertThatThrownBy(() -> IdHeader.idOf(malformed)).isInstanceOf(MalformedIdHeaderException.class);
        assertThat(IdHeader.idText(malformed)).as("shown, and refused by parse").isEqualTo("0x0102");
        assertThatThrownBy(() -> IdHeader.parse(IdHeader.idText(malformed))).isInstanceOf(MalformedIdHeaderException.class);
    }

    @Test
    void shouldSpellTheProvenanceOfEitherFormatAsTopicPartitionOffset() {
        RecordHeaders text = new RecordHeaders();
        text.add(IdHeader.SOURCE, bytes("events.raw/3/17"));
        assertThat(IdHeader.sourceText(text, "ignored", 9)).isEqualTo("events.raw/3/17");
        RecordHeaders compact = new RecordHeaders();
        compact.add(IdHeader.COMPACT_SOURCE, IdHeader.binary(17));
        assertThat(IdHeader.sourceText(compact, "events.raw", 3)).isEqualTo("events.raw/3/17");
        assertThat(IdHeader.sourceText(new RecordHeaders(), "events.raw", 3)).isNull();
    }
}
