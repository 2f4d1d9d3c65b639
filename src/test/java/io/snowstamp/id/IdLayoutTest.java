package io.snowstamp.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class IdLayoutTest {

    private static final long SEED = 0x5EED_1D1AL;
    private static final IdLayout SNOWFLAKE = IdLayout.preset("snowflake");

    @Test
    void shouldDefinePresetsWithTheDocumentedWidths() {
        assertThat(IdLayout.preset("snowflake")).isEqualTo(new IdLayout(41, 0, 10, 12, IdLayout.DEFAULT_EPOCH_MILLIS, 1, false));
        assertThat(IdLayout.preset("sonyflake")).isEqualTo(new IdLayout(39, 0, 16, 8, IdLayout.DEFAULT_EPOCH_MILLIS, 10, true));
        assertThat(IdLayout.preset("butterfly")).isEqualTo(new IdLayout(41, 0, 13, 9, IdLayout.DEFAULT_EPOCH_MILLIS, 1, true));
        assertThat(IdLayout.preset("js-safe")).isEqualTo(new IdLayout(41, 0, 6, 6, IdLayout.DEFAULT_EPOCH_MILLIS, 1, false));
        assertThat(IdLayout.preset(" Snowflake ")).isEqualTo(SNOWFLAKE);
        assertThat(IdLayout.presetNames()).containsExactly("snowflake", "sonyflake", "butterfly", "js-safe");
        assertThat(Instant.ofEpochMilli(IdLayout.DEFAULT_EPOCH_MILLIS)).isEqualTo(Instant.parse("2020-01-01T00:00:00Z"));
    }

    @Test
    void shouldRejectAnUnknownPresetListingTheAcceptedNames() {
        InvalidLayoutException e = catchThrowableOfType(InvalidLayoutException.class, () -> IdLayout.preset("twitter"));
        assertThat(e).hasMessage("id.preset=twitter is unknown: accepted snowflake, sonyflake, butterfly, js-safe");
        assertThat(e.key()).isEqualTo("id.preset");
        assertThat(e.value()).isEqualTo("twitter");
        assertThatThrownBy(() -> IdLayout.preset(null)).isInstanceOf(InvalidLayoutException.class)
                .hasMessageStartingWith("id.preset=null is unknown");
    }

    static Stream<String> presets() {
        return IdLayout.presetNames().stream();
    }

    @ParameterizedTest
    @MethodSource("presets")
    void shouldRoundTripRandomZeroAndMaxFieldValues(String preset) {
        IdLayout layout = IdLayout.preset(preset);
        Random random = new Random(SEED);
        for (int i = 0; i < 20_000; i++) {
            long time = random.nextLong() & layout.maxTime();
            long dc = random.nextLong() & layout.maxDatacenter();
            long worker = random.nextLong() & layout.maxWorker();
            long seq = random.nextLong() & layout.maxSequence();
            long id = layout.encode(time, dc, worker, seq);
            assertThat(layout.decode(id))
                    .as("seed=%d preset=%s i=%d", SEED, preset, i)
                    .isEqualTo(new DecodedId(id, time, dc, worker, seq, layout.toWallMillis(time)));
        }
        assertThat(layout.encode(0, 0, 0, 0)).isZero();
        assertThat(layout.decode(0)).isEqualTo(new DecodedId(0, 0, 0, 0, 0, layout.epochMillis()));
        long max = layout.encode(layout.maxTime(), layout.maxDatacenter(), layout.maxWorker(), layout.maxSequence());
        assertThat(max).isEqualTo(layout.maxId()).isEqualTo((1L << layout.totalBits()) - 1);
        assertThat(layout.decode(max)).isEqualTo(new DecodedId(max, layout.maxTime(), layout.maxDatacenter(),
                layout.maxWorker(), layout.maxSequence(), layout.toWallMillis(layout.maxTime())));
    }

    @Test
    void shouldKeepJsSafeIdsBelowTwoToThe53EvenAtMaxTime() {
        IdLayout jsSafe = IdLayout.preset("js-safe");
        long largest = jsSafe.encode(jsSafe.maxTime(), jsSafe.maxDatacenter(), jsSafe.maxWorker(), jsSafe.maxSequence());
        assertThat(jsSafe.totalBits()).isEqualTo(53);
        assertThat(largest).isEqualTo((1L << 53) - 1);
        assertThat((double) largest).as("exact as a JavaScript number").isEqualTo(largest);
        assertThatThrownBy(() -> jsSafe.decode(1L << 53)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldPutFieldsWhereTheLayoutSays() {
        // Twitter snowflake: timestamp << 22 | worker << 12 | sequence
        assertThat(SNOWFLAKE.encode(1, 0, 0, 0)).isEqualTo(1L << 22);
        assertThat(SNOWFLAKE.encode(0, 0, 1, 0)).isEqualTo(1L << 12);
        assertThat(SNOWFLAKE.encode(0, 0, 0, 1)).isEqualTo(1L);
        IdLayout withDatacenter = new IdLayout(41, 5, 5, 12, 0, 1, false);
        assertThat(withDatacenter.encode(0, 1, 0, 0)).isEqualTo(1L << 17);
        // worker in the low bits: time | sequence | datacenter | worker
        IdLayout butterfly = IdLayout.preset("butterfly");
        assertThat(butterfly.encode(0, 0, 1, 0)).isEqualTo(1L);
        assertThat(butterfly.encode(0, 0, 0, 1)).isEqualTo(1L << 13);
        assertThat(butterfly.encode(1, 0, 0, 0)).isEqualTo(1L << 22);
        IdLayout lowWithDatacenter = withDatacenter.withWorkerInLowBits(true);
        assertThat(lowWithDatacenter.encode(0, 1, 0, 0)).isEqualTo(1L << 5);
        assertThat(lowWithDatacenter.encode(0, 0, 0, 1)).isEqualTo(1L << 10);
    }

    @Test
    void shouldRejectFieldsOutsideTheLayoutWhenEncoding() {
        assertThatThrownBy(() -> SNOWFLAKE.encode(0, 0, 1024, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("worker=1024 is out of range: accepted 0..1023 in layout t41.d0.w10.s12.u1ms.e1577836800000.mid");
        assertThatThrownBy(() -> SNOWFLAKE.encode(-1, 0, 0, 0)).hasMessageStartingWith("time=-1 is out of range");
        assertThatThrownBy(() -> SNOWFLAKE.encode(0, 1, 0, 0)).hasMessageStartingWith("datacenter=1 is out of range: accepted 0..0");
        assertThatThrownBy(() -> SNOWFLAKE.encode(0, 0, 0, 4096)).hasMessageStartingWith("sequence=4096 is out of range: accepted 0..4095");
        assertThatThrownBy(() -> SNOWFLAKE.encode(1L << 41, 0, 0, 0)).hasMessageStartingWith("time=2199023255552 is out of range");
    }

    @Test
    void shouldRejectIdsOutsideTheLayoutWhenDecoding() {
        assertThatThrownBy(() -> SNOWFLAKE.decode(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("id -1 is out of range: accepted 0..9223372036854775807 (63 bits)");
        IdLayout narrow = new IdLayout(20, 0, 4, 8, 0, 1, false);
        assertThatThrownBy(() -> narrow.decode(1L << 32)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("accepted 0..4294967295 (32 bits)");
        assertThat(narrow.decode((1L << 32) - 1).time()).isEqualTo(narrow.maxTime());
    }

    @Test
    void shouldConvertBetweenWallMillisAndTimeUnits() {
        IdLayout tenMs = SNOWFLAKE.withUnitMillis(10).withEpochMillis(1_000);
        assertThat(tenMs.unitsSinceEpoch(1_000)).isZero();
        assertThat(tenMs.unitsSinceEpoch(1_009)).isZero();
        assertThat(tenMs.unitsSinceEpoch(1_010)).isEqualTo(1);
        assertThat(tenMs.unitsSinceEpoch(999)).as("floor, not truncation, before the epoch").isEqualTo(-1);
        assertThat(tenMs.unitsSinceEpoch(Long.MIN_VALUE)).as("clamped, not wrapped").isNegative();
        assertThat(tenMs.toWallMillis(0)).isEqualTo(1_000);
        assertThat(tenMs.toWallMillis(7)).isEqualTo(1_070);
        assertThat(tenMs.toWallMillis(-1)).isEqualTo(990);
        assertThat(tenMs.toWallMillis(tenMs.unitsSinceEpoch(123_456))).isEqualTo(123_450);

        IdLayout wide = new IdLayout(62, 0, 0, 1, IdLayout.MAX_EPOCH_MILLIS, 1000, false);
        assertThat(wide.toWallMillis(wide.maxTime())).as("saturates").isEqualTo(Long.MAX_VALUE);
        assertThat(wide.toWallMillis(Long.MIN_VALUE)).as("saturates").isEqualTo(Long.MIN_VALUE);
        assertThat(wide.maxWallMillis()).isEqualTo(Long.MAX_VALUE);
        assertThat(Instant.ofEpochMilli(SNOWFLAKE.maxWallMillis())).isEqualTo(Instant.parse("2089-09-06T15:47:35.551Z"));
    }

    @Test
    void shouldDescribeAndFingerprintEveryField() {
        assertThat(SNOWFLAKE.fingerprint()).isEqualTo("t41.d0.w10.s12.u1ms.e1577836800000.mid");
        assertThat(SNOWFLAKE.describe()).isEqualTo(
                "time=41 bits of 1 ms since 2020-01-01T00:00:00Z, datacenter=0, worker=10, sequence=12, worker in middle bits");
        IdLayout sonyflake = IdLayout.preset("sonyflake");
        assertThat(sonyflake.fingerprint()).isEqualTo("t39.d0.w16.s8.u10ms.e1577836800000.low");
        assertThat(sonyflake.describe()).isEqualTo(
                "time=39 bits of 10 ms since 2020-01-01T00:00:00Z, datacenter=0, worker=16, sequence=8, worker in low bits");
    }

    @Test
    void shouldHaveEqualFingerprintsExactlyForEqualLayouts() {
        Random random = new Random(SEED);
        Map<String, IdLayout> byFingerprint = new HashMap<>();
        for (int i = 0; i < 5_000; i++) {
            IdLayout layout = randomLayout(random);
            String fingerprint = layout.fingerprint();
            assertThat(IdLayout.fromFingerprint(fingerprint)).as("seed=%d i=%d", SEED, i).isEqualTo(layout);
            IdLayout seen = byFingerprint.putIfAbsent(fingerprint, layout);
            if (seen != null) {
                assertThat(seen).as("seed=%d i=%d", SEED, i).isEqualTo(layout);
            }
        }
        // each single-field change shows in the fingerprint
        IdLayout base = IdLayout.preset("js-safe");
        assertThat(Stream.of(base, base.withTimeBits(40), base.withDatacenterBits(1), base.withWorkerBits(9),
                        base.withSequenceBits(11), base.withUnitMillis(10), base.withEpochMillis(0),
                        base.withWorkerInLowBits(true))
                .map(IdLayout::fingerprint).distinct().count()).isEqualTo(8);
    }

    @Test
    void shouldRefuseTextThatIsNotAFingerprint() {
        assertThatThrownBy(() -> IdLayout.fromFingerprint("t41.d0.w10.s12.u1ms.e1577836800000"))
                .isInstanceOf(InvalidLayoutException.class).hasMessageContaining("is not a layout fingerprint");
        assertThatThrownBy(() -> IdLayout.fromFingerprint(null)).isInstanceOf(InvalidLayoutException.class);
        assertThatThrownBy(() -> IdLayout.fromFingerprint("t60.d0.w10.s12.u1ms.e0.mid"))
                .isInstanceOf(InvalidLayoutException.class).hasMessageContaining("out of range");
    }

    @Test
    void shouldRejectEachFieldOutOfRangeNamingKeyValueAndRange() {
        assertInvalid(() -> SNOWFLAKE.withTimeBits(0),
                "id.time-bits", "0", "id.time-bits=0 is out of range: accepted 1..63 and time+datacenter+worker+sequence bits <= 63 (now 22)");
        assertInvalid(() -> SNOWFLAKE.withTimeBits(64), "id.time-bits", "64", "id.time-bits=64 is out of range: accepted 1..63 and time+datacenter+worker+sequence bits <= 63 (now 86)");
        assertInvalid(() -> SNOWFLAKE.withDatacenterBits(-1), "id.datacenter-bits", "-1", "id.datacenter-bits=-1 is out of range: accepted 0..63 and time+datacenter+worker+sequence bits <= 63 (now 62)");
        assertInvalid(() -> SNOWFLAKE.withDatacenterBits(64), "id.datacenter-bits", "64", "id.datacenter-bits=64 is out of range: accepted 0..63 and time+datacenter+worker+sequence bits <= 63 (now 127)");
        assertInvalid(() -> SNOWFLAKE.withWorkerBits(70), "id.worker-bits", "70",
                "id.worker-bits=70 is out of range: accepted 0..63 and time+datacenter+worker+sequence bits <= 63 (now 123)");
        assertInvalid(() -> SNOWFLAKE.withWorkerBits(-3), "id.worker-bits", "-3", "id.worker-bits=-3 is out of range: accepted 0..63 and time+datacenter+worker+sequence bits <= 63 (now 50)");
        assertInvalid(() -> SNOWFLAKE.withSequenceBits(0), "id.sequence-bits", "0", "id.sequence-bits=0 is out of range: accepted 1..63 and time+datacenter+worker+sequence bits <= 63 (now 51)");
        assertInvalid(() -> SNOWFLAKE.withSequenceBits(Integer.MAX_VALUE), "id.sequence-bits", "2147483647",
                "id.sequence-bits=2147483647 is out of range: accepted 1..63 and time+datacenter+worker+sequence bits <= 63 (now 2147483698)");
        assertInvalid(() -> SNOWFLAKE.withWorkerBits(16),
                "id.time-bits+id.datacenter-bits+id.worker-bits+id.sequence-bits", "41+0+16+12=69",
                "id.time-bits+id.datacenter-bits+id.worker-bits+id.sequence-bits=41+0+16+12=69 is out of range: accepted a total <= 63");
        assertInvalid(() -> SNOWFLAKE.withUnitMillis(0), "id.time-unit", "0ms", "id.time-unit=0ms is out of range: accepted 1ms..1000ms");
        assertInvalid(() -> SNOWFLAKE.withUnitMillis(1001), "id.time-unit", "1001ms", "id.time-unit=1001ms is out of range: accepted 1ms..1000ms");
        assertInvalid(() -> SNOWFLAKE.withEpochMillis(-1), "id.epoch", "1969-12-31T23:59:59.999Z",
                "id.epoch=1969-12-31T23:59:59.999Z (-1 ms) is out of range: accepted 1970-01-01T00:00:00Z..9999-12-31T23:59:59.999Z");
        assertInvalid(() -> SNOWFLAKE.withEpochMillis(IdLayout.MAX_EPOCH_MILLIS + 1), "id.epoch", "+10000-01-01T00:00:00Z",
                "id.epoch=+10000-01-01T00:00:00Z (253402300800000 ms) is out of range: accepted 1970-01-01T00:00:00Z..9999-12-31T23:59:59.999Z");
    }

    @Test
    void shouldAcceptTheBoundaryValues() {
        assertThat(new IdLayout(1, 0, 0, 62, 0, 1, false).totalBits()).isEqualTo(63);
        assertThat(new IdLayout(62, 0, 0, 1, IdLayout.MAX_EPOCH_MILLIS, 1000, true).maxSequence()).isEqualTo(1);
        assertThat(new IdLayout(1, 0, 0, 1, 0, 1, false).maxId()).isEqualTo(3);
        assertThat(new IdLayout(20, 20, 20, 3, 0, 1, false).maxDatacenter()).isEqualTo((1 << 20) - 1);
    }

    private static void assertInvalid(Runnable build, String key, String value, String message) {
        InvalidLayoutException e = catchThrowableOfType(InvalidLayoutException.class, build::run);
        assertThat(e).as("expected InvalidLayoutException for %s=%s", key, value).isNotNull();
        assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
        assertThat(e.key()).isEqualTo(key);
        assertThat(e.value()).isEqualTo(value);
    }

    /** A valid layout with random widths, epoch, unit and arrangement; shared with the property tests. */
    static IdLayout randomLayout(Random random) {
        int timeBits = 1 + random.nextInt(50);
        int sequenceBits = 1 + random.nextInt(Math.min(20, 63 - timeBits));
        int left = 63 - timeBits - sequenceBits;
        int datacenterBits = random.nextInt(Math.min(6, left) + 1);
        left -= datacenterBits;
        int workerBits = random.nextInt(Math.min(16, left) + 1);
        long epoch = (random.nextLong() >>> 1) % (IdLayout.MAX_EPOCH_MILLIS + 1);
        long unit = random.nextBoolean() ? 1 : 1 + random.nextInt((int) IdLayout.MAX_UNIT_MILLIS);
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epoch, unit, random.nextBoolean());
    }
}
