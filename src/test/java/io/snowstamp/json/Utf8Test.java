package io.snowstamp.json;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The UTF-8 check against the JDK's strict decoder, which follows RFC 3629 too. */
class Utf8Test {
    /** The bytes where the ranges of a sequence's later bytes begin and end. */
    private static final int[] EDGES = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
    private final CharsetDecoder strict = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);

    private boolean jdkAccepts(byte[] bytes) {
        try {
            strict.decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private void agree(byte[] bytes) {
        assertThat(Utf8.firstInvalid(bytes) < 0).as(Arrays.toString(bytes)).isEqualTo(jdkAccepts(bytes));
    }

    @Test
    void shouldAgreeWithTheJdkOnEverySequenceOfUpToTwoBytesAndThreeAroundEachEdge() {
        for (int a = 0; a < 256; a++) {
            agree(new byte[] {(byte) a});
            for (int b = 0; b < 256; b++) {
                agree(new byte[] {(byte) a, (byte) b});
                if (a >= 0xC0) {     // after an ASCII or continuation first byte the rest was covered by the shorter ones
                    for (int c : EDGES) {
                        agree(new byte[] {(byte) a, (byte) b, (byte) c});
                    }
                }
            }
        }
    }

    @Test
    void shouldAgreeWithTheJdkOnFourByteSequences() {
        for (int a = 0xF0; a < 256; a++) {
            for (int b = 0; b < 256; b++) {
                for (int c : EDGES) {
                    for (int d : EDGES) {
                        agree(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
                    }
                }
            }
        }
    }

    @Test
    void shouldFindTheFirstIllFormedByteAfterLongAsciiRuns() {
        byte[] text = "plain ascii text, long enough for the wide scan: 0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        assertThat(Utf8.firstInvalid(text)).isEqualTo(-1);
        for (int at : new int[] {0, 15, 16, 17, 40, text.length - 1}) {
            byte[] bad = text.clone();
            bad[at] = (byte) 0xC0;
            assertThat(Utf8.firstInvalid(bad)).as("at %d", at).isEqualTo(at);
        }
        byte[] mixed = "€ and ascii after it, then é".getBytes(StandardCharsets.UTF_8);
        assertThat(Utf8.firstInvalid(mixed)).isEqualTo(-1);
        assertThat(Utf8.firstInvalid(Arrays.copyOf(mixed, mixed.length - 1))).isEqualTo(mixed.length - 2);
    }
}
