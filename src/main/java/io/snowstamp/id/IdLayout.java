package io.snowstamp.id;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Bit layout of an ID: {@code 0 | time | datacenter | worker | sequence}, most significant bit
 * first, or {@code 0 | time | sequence | datacenter | worker} when {@code workerInLowBits}
 * (Butterfly, sonyflake: consecutive IDs of one worker then differ by more than 1).
 *
 * <p>The time field counts units of {@code unitMillis} since {@code epochMillis} (Unix millis).
 * Because time is always the most significant field and, for one generator, datacenter and worker
 * are constant, the IDs of one generator sort by {@code (time, sequence)} in either arrangement.
 *
 * <p>Accepted values (checked in the constructor, so every instance is valid):
 * <ul>
 *   <li>{@code timeBits} 1..63 and {@code sequenceBits} 1..63: a generator needs a clock to carry
 *       into and a sequence to count in; a layout without a sequence would borrow a unit on every ID
 *       issued within one unit, which is almost certainly a mistake.
 *   <li>{@code datacenterBits} and {@code workerBits} 0..63 (0 = the field is absent);
 *   <li>{@code timeBits + datacenterBits + workerBits + sequenceBits <= 63}, so IDs are never negative;
 *   <li>{@code unitMillis} 1..1000 (1 ms is the default, sonyflake uses 10 ms);
 *   <li>{@code epochMillis} from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z.
 * </ul>
 * There is deliberately no minimum lifetime: whether a narrow time field still has room depends on
 * the wall clock, which this class never reads. Callers that want such a check compare
 * {@link #maxWallMillis()} with their clock. Violations throw {@link InvalidLayoutException}
 * naming the configuration key ({@code id.time-bits}, {@code id.datacenter-bits},
 * {@code id.worker-bits}, {@code id.sequence-bits}, {@code id.time-unit}, {@code id.epoch}),
 * the value and the accepted range.
 *
 * <p>Instances are immutable and thread-safe; {@code withX} methods return validated copies.
 *
 * @param timeBits        width of the time field
 * @param datacenterBits  width of the datacenter field (may be 0)
 * @param workerBits      width of the worker field (may be 0)
 * @param sequenceBits    width of the sequence field
 * @param epochMillis     Unix millis at which time 0 starts
 * @param unitMillis      length of one time unit in milliseconds
 * @param workerInLowBits {@code true}: {@code time | sequence | datacenter | worker};
 *                        {@code false}: {@code time | datacenter | worker | sequence}
 */
public record IdLayout(int timeBits, int datacenterBits, int workerBits, int sequenceBits,
                       long epochMillis, long unitMillis, boolean workerInLowBits) {

    /** 2020-01-01T00:00:00Z, the epoch of every preset. */
    public static final long DEFAULT_EPOCH_MILLIS = 1577836800000L;

    /** Largest accepted epoch: 9999-12-31T23:59:59.999Z, the last instant with a four-digit year. */
    public static final long MAX_EPOCH_MILLIS = 253402300799999L;

    /** Largest accepted time unit, in milliseconds. */
    public static final long MAX_UNIT_MILLIS = 1000L;

    /** IDs are non-negative longs, so all fields share the 63 bits below the sign bit. */
    public static final int MAX_TOTAL_BITS = 63;

    private static final List<String> PRESET_NAMES = List.of("snowflake", "sonyflake", "butterfly", "js-safe");

    private static final Pattern FINGERPRINT = Pattern.compile(
            "t(\\d{1,2})\\.d(\\d{1,2})\\.w(\\d{1,2})\\.s(\\d{1,2})\\.u(\\d{1,4})ms\\.e(\\d{1,15})\\.(mid|low)");

    /** Validates every field; see the class comment for the accepted ranges. */
    public IdLayout {
        // long: absurd widths must not wrap around into a total that looks acceptable
        long total = (long) timeBits + datacenterBits + workerBits + sequenceBits;
        checkWidth("id.time-bits", timeBits, 1, total);
        checkWidth("id.datacenter-bits", datacenterBits, 0, total);
        checkWidth("id.worker-bits", workerBits, 0, total);
        checkWidth("id.sequence-bits", sequenceBits, 1, total);
        if (total > MAX_TOTAL_BITS) {
            throw new InvalidLayoutException(
                    "id.time-bits+id.datacenter-bits+id.worker-bits+id.sequence-bits",
                    timeBits + "+" + datacenterBits + "+" + workerBits + "+" + sequenceBits + "=" + total,
                    "is out of range: accepted a total <= " + MAX_TOTAL_BITS);
        }
        if (unitMillis < 1 || unitMillis > MAX_UNIT_MILLIS) {
            throw new InvalidLayoutException("id.time-unit", unitMillis + "ms",
                    "is out of range: accepted 1ms.." + MAX_UNIT_MILLIS + "ms");
        }
        if (epochMillis < 0 || epochMillis > MAX_EPOCH_MILLIS) {
            throw new InvalidLayoutException("id.epoch", Instant.ofEpochMilli(epochMillis).toString(),
                    "(" + epochMillis + " ms) is out of range: accepted " + Instant.ofEpochMilli(0) + ".."
                            + Instant.ofEpochMilli(MAX_EPOCH_MILLIS));
        }
    }

    private static void checkWidth(String key, int bits, int min, long total) {
        if (bits < min || bits > MAX_TOTAL_BITS) {
            throw new InvalidLayoutException(key, Integer.toString(bits),
                    "is out of range: accepted " + min + ".." + MAX_TOTAL_BITS
                            + " and time+datacenter+worker+sequence bits <= " + MAX_TOTAL_BITS + " (now " + total + ")");
        }
    }

    /**
     * A named layout, all with epoch {@link #DEFAULT_EPOCH_MILLIS}:
     * <ul>
     *   <li>{@code snowflake}: 41 bits of 1 ms, no datacenter, 10 worker, 12 sequence, worker in the middle (Twitter);
     *   <li>{@code sonyflake}: 39 bits of 10 ms, no datacenter, 16 worker, 8 sequence, worker in the low bits
     *       (the original sonyflake order {@code time | sequence | machine});
     *   <li>{@code butterfly}: 41 bits of 1 ms, no datacenter, 13 worker, 9 sequence, worker in the low bits
     *       (SimonAlong/Butterfly: worker moved to the end and widened to 13 bits, sequence cut to 9);
     *   <li>{@code js-safe}: 41 bits of 1 ms, no datacenter, 6 worker, 6 sequence: 53 bits in all, so
     *       every ID is below 2^53 and exact as a JavaScript number.
     * </ul>
     * Names are matched ignoring case and surrounding blanks.
     *
     * @throws InvalidLayoutException (key {@code id.preset}) for an unknown or null name, listing the accepted names
     */
    public static IdLayout preset(String name) {
        String normalized = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        switch (normalized) {
            case "snowflake":
                return new IdLayout(41, 0, 10, 12, DEFAULT_EPOCH_MILLIS, 1, false);
            case "sonyflake":
                return new IdLayout(39, 0, 16, 8, DEFAULT_EPOCH_MILLIS, 10, true);
            case "butterfly":
                return new IdLayout(41, 0, 13, 9, DEFAULT_EPOCH_MILLIS, 1, true);
            case "js-safe":
                return new IdLayout(41, 0, 6, 6, DEFAULT_EPOCH_MILLIS, 1, false);
            default:
                throw new InvalidLayoutException("id.preset", String.valueOf(name),
                        "is unknown: accepted " + String.join(", ", PRESET_NAMES));
        }
    }

    /** The names {@link #preset(String)} accepts, in documentation order. */
    public static List<String> presetNames() {
        return PRESET_NAMES;
    }

    /**
     * The inverse of {@link #fingerprint()}.
     *
     * @throws InvalidLayoutException if the text is not a fingerprint or describes an invalid layout
     */
    public static IdLayout fromFingerprint(String fingerprint) {
        Matcher m = fingerprint == null ? null : FINGERPRINT.matcher(fingerprint);
        if (m == null || !m.matches()) {
            throw new InvalidLayoutException("layoutFingerprint", String.valueOf(fingerprint),
                    "is not a layout fingerprint: expected the form t41.d0.w10.s12.u1ms.e1577836800000.mid (or .low)");
        }
        return new IdLayout(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)),
                Long.parseLong(m.group(6)), Long.parseLong(m.group(5)), m.group(7).equals("low"));
    }

    public IdLayout withEpochMillis(long epochMillis) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    public IdLayout withUnitMillis(long unitMillis) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    public IdLayout withWorkerInLowBits(boolean workerInLowBits) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    public IdLayout withTimeBits(int timeBits) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    public IdLayout withDatacenterBits(int datacenterBits) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    public IdLayout withWorkerBits(int workerBits) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    public IdLayout withSequenceBits(int sequenceBits) {
        return new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits, epochMillis, unitMillis, workerInLowBits);
    }

    /** Largest time field value, {@code 2^timeBits - 1}. */
    public long maxTime() {
        return mask(timeBits);
    }

    /** Largest datacenter field value, {@code 2^datacenterBits - 1} (0 when the field is absent). */
    public long maxDatacenter() {
        return mask(datacenterBits);
    }

    /** Largest worker field value, {@code 2^workerBits - 1} (0 when the field is absent). */
    public long maxWorker() {
        return mask(workerBits);
    }

    /** Largest sequence field value, {@code 2^sequenceBits - 1}. */
    public long maxSequence() {
        return mask(sequenceBits);
    }

    /** Sum of the four widths; every ID is below {@code 2^totalBits()}. */
    public int totalBits() {
        return timeBits + datacenterBits + workerBits + sequenceBits;
    }

    /** Largest ID of this layout, {@code 2^totalBits() - 1}. */
    public long maxId() {
        return mask(totalBits());
    }

    /** Right shift that brings the time field to bit 0. */
    int timeShift() {
        return totalBits() - timeBits;
    }

    /** Right shift that brings the datacenter field to bit 0. */
    int datacenterShift() {
        return workerInLowBits ? workerBits : workerBits + sequenceBits;
    }

    /** Right shift that brings the worker field to bit 0. */
    int workerShift() {
        return workerInLowBits ? 0 : sequenceBits;
    }

    /** Right shift that brings the sequence field to bit 0. */
    int sequenceShift() {
        return workerInLowBits ? datacenterBits + workerBits : 0;
    }

    // (1L << 63) - 1 is Long.MAX_VALUE and (1L << 0) - 1 is 0, so every width 0..63 needs no special case.
    private static long mask(int bits) {
        return (1L << bits) - 1;
    }

    /**
     * Packs the four fields into an ID.
     *
     * @throws IllegalArgumentException if a field is negative or above its maximum
     */
    public long encode(long time, long datacenter, long worker, long sequence) {
        checkField("time", time, maxTime());
        checkField("datacenter", datacenter, maxDatacenter());
        checkField("worker", worker, maxWorker());
        checkField("sequence", sequence, maxSequence());
        return (time << timeShift()) | (datacenter << datacenterShift()) | (worker << workerShift())
                | (sequence << sequenceShift());
    }

    private void checkField(String field, long value, long max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(field + "=" + value + " is out of range: accepted 0.." + max
                    + " in layout " + fingerprint());
        }
    }

    /**
     * Splits an ID into its fields; the exact inverse of {@link #encode}.
     *
     * @throws IllegalArgumentException if the ID is negative or has bits set above {@link #totalBits()}
     */
    public DecodedId decode(long id) {
        if (id < 0 || id > maxId()) {
            throw new IllegalArgumentException("id " + id + " is out of range: accepted 0.." + maxId()
                    + " (" + totalBits() + " bits) in layout " + fingerprint());
        }
        long time = id >>> timeShift();
        return new DecodedId(id, time,
                (id >>> datacenterShift()) & maxDatacenter(),
                (id >>> workerShift()) & maxWorker(),
                (id >>> sequenceShift()) & maxSequence(),
                toWallMillis(time));
    }

    /**
     * Whole time units from the epoch to {@code wallMillis}, rounded down: {@code floorDiv(wallMillis - epochMillis, unitMillis)}.
     * Negative before the epoch. For absurd inputs below {@code Long.MIN_VALUE + epochMillis} the
     * difference is clamped to {@code Long.MIN_VALUE} instead of overflowing.
     */
    public long unitsSinceEpoch(long wallMillis) {
        long sinceEpoch = wallMillis < Long.MIN_VALUE + epochMillis ? Long.MIN_VALUE : wallMillis - epochMillis;
        return Math.floorDiv(sinceEpoch, unitMillis);
    }

    /**
     * Unix millis at which time unit {@code timeUnits} starts: {@code epochMillis + timeUnits * unitMillis}.
     * Saturates at {@code Long.MAX_VALUE} / {@code Long.MIN_VALUE} where the exact value does not fit a
     * long (only wide time fields with coarse units get there).
     */
    public long toWallMillis(long timeUnits) {
        if (timeUnits >= 0) {
            return timeUnits > (Long.MAX_VALUE - epochMillis) / unitMillis ? Long.MAX_VALUE : epochMillis + timeUnits * unitMillis;
        }
        // epochMillis >= 0, so once the product fits, adding the epoch cannot underflow
        return timeUnits < Long.MIN_VALUE / unitMillis ? Long.MIN_VALUE : epochMillis + timeUnits * unitMillis;
    }

    /**
     * The last Unix millisecond whose time unit still fits the time field: the end of this layout's
     * lifetime (saturating at {@code Long.MAX_VALUE}).
     */
    public long maxWallMillis() {
        long start = toWallMillis(maxTime());
        return start > Long.MAX_VALUE - (unitMillis - 1) ? Long.MAX_VALUE : start + (unitMillis - 1);
    }

    /**
     * A stable canonical string of all seven fields, e.g. {@code t41.d0.w10.s12.u1ms.e1577836800000.mid}
     * ({@code low} when the worker is in the low bits). Two layouts are equal exactly when their
     * fingerprints are; {@link #fromFingerprint(String)} parses it back. Meant to be persisted next to
     * issued IDs so a layout change can be detected.
     */
    public String fingerprint() {
        return "t" + timeBits + ".d" + datacenterBits + ".w" + workerBits + ".s" + sequenceBits
                + ".u" + unitMillis + "ms.e" + epochMillis + (workerInLowBits ? ".low" : ".mid");
    }

    /**
     * A sentence for logs and error messages, e.g. {@code time=41 bits of 1 ms since 2020-01-01T00:00:00Z,
     * datacenter=0, worker=10, sequence=12, worker in middle bits}.
     */
    public String describe() {
        return "time=" + timeBits + " bits of " + unitMillis + " ms since " + Instant.ofEpochMilli(epochMillis)
                + ", datacenter=" + datacenterBits + ", worker=" + workerBits + ", sequence=" + sequenceBits
                + (workerInLowBits ? ", worker in low bits" : ", worker in middle bits");
    }
}
