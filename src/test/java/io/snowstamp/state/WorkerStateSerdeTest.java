package io.snowstamp.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WorkerStateSerdeTest {

    private static final long SEED = 0x57A7EL;
    private static final String TOPIC = "snowstamp-worker-state-changelog";
    private static final WorkerStateSerde SERDE = new WorkerStateSerde();

    /** A small state whose encoding is written out by hand below. */
    private static final WorkerState KNOWN = new WorkerState("fp", 5, 2, "h\u00e9", 0x0102030405060708L, 0x1112131415161718L, 4096, -1,
            0x2122232425262728L);
    private static final String KNOWN_HEX = "02"    // version
            + "0002" + "6670"                        // "fp"
            + "0000000000000005"                     // workerId
            + "0000000000000002"                     // epoch
            + "0003" + "68c3a9"                      // "hé" in UTF-8: 3 bytes
            + "0102030405060708"                     // acquiredAt
            + "1112131415161718"                     // heartbeatAt
            + "0000000000001000"                     // lastId 4096
            + "ffffffffffffffff"                     // reservedUntil -1
            + "2122232425262728";                    // writtenAt
    /** The same state as format version 1 stored it: no writtenAt. */
    private static final String KNOWN_V1_HEX = "01" + KNOWN_HEX.substring(2, KNOWN_HEX.length() - 16);

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    @Test
    void shouldWriteTheDocumentedByteLayoutWithTheVersionFirst() {
        byte[] bytes = SERDE.serialize(TOPIC, KNOWN);

        assertThat(HexFormat.of().formatHex(bytes)).isEqualTo(KNOWN_HEX);
        assertThat(bytes[0]).isEqualTo(WorkerStateSerde.VERSION).isEqualTo((byte) 2);
        assertThat(SERDE.deserialize(TOPIC, hex(KNOWN_HEX))).isEqualTo(KNOWN);
    }

    @Test
    void shouldStillReadFormatVersion1WithAnUnknownWriteTime() {
        assertThat(SERDE.deserialize(TOPIC, hex(KNOWN_V1_HEX))).isEqualTo(KNOWN.withWrittenAt(0));
        assertThatThrownBy(() -> SERDE.deserialize(TOPIC, hex(KNOWN_V1_HEX + "00")))
                .isInstanceOf(SerializationException.class)
                .hasMessage("worker-state record has 1 trailing bytes");
    }

    @Test
    void shouldRoundTripARealisticState() {
        WorkerState state = new WorkerState("t41.d0.w10.s12.u1ms.e1577836800000.mid", 1023, 17,
                "box-1/snowstamp-StreamThread-1", 1_767_225_600_000L, 1_767_225_601_000L, 7_000_000_000_000_000L, 7_000_000_000_100_000L);

        assertThat(SERDE.deserializer().deserialize(TOPIC, SERDE.serializer().serialize(TOPIC, state))).isEqualTo(state);
    }

    @Test
    void shouldRoundTripRandomStates() {
        Random random = new Random(SEED);
        for (int i = 0; i < 2_000; i++) {
            WorkerState state = new WorkerState(randomString(random), random.nextLong() & Long.MAX_VALUE,
                    random.nextLong() & Long.MAX_VALUE, randomString(random), random.nextLong(), random.nextLong(),
                    random.nextLong(), random.nextLong(), random.nextLong());

            assertThat(SERDE.deserialize(TOPIC, SERDE.serialize(TOPIC, state))).as("seed=%d i=%d", SEED, i).isEqualTo(state);
        }
    }

    /** 0..40 code points from ASCII, Latin-1, CJK and astral planes (surrogate pairs), well-formed. */
    private static String randomString(Random random) {
        StringBuilder out = new StringBuilder();
        int length = random.nextInt(41);
        for (int i = 0; i < length; i++) {
            int kind = random.nextInt(4);
            int codePoint = switch (kind) {
                case 0 -> 0x20 + random.nextInt(0x5F);
                case 1 -> 0xA0 + random.nextInt(0x60);
                case 2 -> 0x4E00 + random.nextInt(0x5000);
                default -> 0x1F300 + random.nextInt(0x300);
            };
            out.appendCodePoint(codePoint);
        }
        return out.toString();
    }

    @Test
    void shouldRoundTripEmptyStringsAndExtremeNumbers() {
        WorkerState empty = new WorkerState("", 0, 0, "", 0, 0, -1, -1);
        WorkerState extreme = new WorkerState("x", Long.MAX_VALUE, Long.MAX_VALUE, "y", Long.MIN_VALUE, Long.MAX_VALUE,
                Long.MAX_VALUE, Long.MIN_VALUE);

        assertThat(SERDE.deserialize(TOPIC, SERDE.serialize(TOPIC, empty))).isEqualTo(empty);
        assertThat(SERDE.serialize(TOPIC, empty)).hasSize(1 + 2 + 8 + 8 + 2 + 5 * 8);
        assertThat(SERDE.deserialize(TOPIC, SERDE.serialize(TOPIC, extreme))).isEqualTo(extreme);
    }

    @Test
    void shouldRoundTripAUnicodeHolder() {
        String holder = "\u96ea\u82b1-\u0441\u043d\u0435\u0433/\ud83d\ude80-thread-1";
        WorkerState state = WorkerState.initial("fp", 3).withNewLease(holder, 42);

        byte[] bytes = SERDE.serialize(TOPIC, state);

        assertThat(SERDE.deserialize(TOPIC, bytes).holder()).isEqualTo(holder);
        int holderBytes = holder.getBytes(StandardCharsets.UTF_8).length;
        assertThat(bytes).hasSize(1 + 2 + 2 + 8 + 8 + 2 + holderBytes + 5 * 8);
    }

    @Test
    void shouldRoundTripTheLongestAllowedStringAndRefuseALongerOne() {
        WorkerState longest = new WorkerState("fp", 1, 1, "a".repeat(Short.MAX_VALUE), 0, 0, -1, -1);
        WorkerState tooLong = new WorkerState("fp", 1, 1, "a".repeat(Short.MAX_VALUE + 1), 0, 0, -1, -1);

        assertThat(SERDE.deserialize(TOPIC, SERDE.serialize(TOPIC, longest))).isEqualTo(longest);
        assertThatThrownBy(() -> SERDE.serialize(TOPIC, tooLong))
                .isInstanceOf(SerializationException.class)
                .hasMessage("worker-state string too long: 32768 bytes");
    }

    @Test
    void shouldMapNullToNullBothWays() {
        assertThat(SERDE.serialize(TOPIC, null)).isNull();
        assertThat(SERDE.deserialize(TOPIC, null)).isNull();
    }

    @ParameterizedTest
    @ValueSource(bytes = {0, 3, 7, -1})
    void shouldRefuseAnUnknownVersion(byte version) {
        byte[] bytes = hex(KNOWN_HEX);
        bytes[0] = version;

        assertThatThrownBy(() -> SERDE.deserialize(TOPIC, bytes))
                .isInstanceOf(SerializationException.class)
                .hasMessage("worker-state record has format version " + version
                        + ", this snowstamp reads versions 1 and 2 (a newer snowstamp wrote it?)");
    }

    @Test
    void shouldRefuseEveryTruncation() {
        byte[] full = hex(KNOWN_HEX);
        for (int length = 0; length < full.length; length++) {
            byte[] truncated = Arrays.copyOf(full, length);

            assertThatThrownBy(() -> SERDE.deserialize(TOPIC, truncated))
                    .as("first %d of %d bytes", length, full.length)
                    .isInstanceOf(SerializationException.class)
                    .hasMessage("worker-state record is truncated or corrupt (" + length + " bytes)");
        }
    }

    @Test
    void shouldRefuseTrailingBytes() {
        byte[] full = hex(KNOWN_HEX);

        assertThatThrownBy(() -> SERDE.deserialize(TOPIC, Arrays.copyOf(full, full.length + 1)))
                .isInstanceOf(SerializationException.class)
                .hasMessage("worker-state record has 1 trailing bytes");
        assertThatThrownBy(() -> SERDE.deserialize(TOPIC, Arrays.copyOf(full, full.length + 9)))
                .isInstanceOf(SerializationException.class)
                .hasMessage("worker-state record has 9 trailing bytes");
    }

    @Test
    void shouldRefuseImpossibleValues() {
        byte[] negativeWorker = hex(KNOWN_HEX.replace("0000000000000005", "8000000000000005"));
        byte[] negativeLength = hex("02" + "8000" + KNOWN_HEX.substring(6 + 4));

        assertThatThrownBy(() -> SERDE.deserialize(TOPIC, negativeWorker))
                .isInstanceOf(SerializationException.class)
                .hasMessageStartingWith("worker-state record is truncated or corrupt")
                .hasRootCauseMessage("workerId and epoch must be >= 0, got -9223372036854775803, 2");
        assertThatThrownBy(() -> SERDE.deserialize(TOPIC, negativeLength))
                .isInstanceOf(SerializationException.class)
                .hasMessageStartingWith("worker-state record is truncated or corrupt");
    }
}
