package io.snowstamp.id;

import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Issues strictly increasing IDs for one {@code (datacenter, worker)} pair of an {@link IdLayout},
 * driven by a logical clock.
 *
 * <p><b>Contract.</b> Each {@link #next()} reads the injected clock once and issues the pair
 * {@code (t, seq)} right after the previous one:
 * <ul>
 *   <li>{@code t = max(unitsSinceEpoch(clock), lastTime)}; a clock before the epoch counts as time 0;
 *   <li>if {@code t} is a new time unit, {@code seq = 0};
 *   <li>otherwise {@code seq + 1}, and when the sequence overflows, {@code t = lastTime + 1, seq = 0}:
 *       the generator borrows the next time unit instead of waiting for it.
 * </ul>
 * So it <b>never sleeps</b> and <b>never throws because the clock went backwards</b>: after a
 * rollback it keeps counting above the last ID and runs ahead of the wall clock (see
 * {@link #leadMillis()}) until the clock catches up. The only failure is
 * {@link IdSpaceExhaustedException}, when the time field would exceed {@link IdLayout#maxTime()}.
 *
 * <p>IDs of one generator are unique and increasing; IDs of generators with different
 * {@code (datacenter, worker)} pairs on the same layout never collide, whatever their clocks do.
 *
 * <p><b>Not thread-safe:</b> one instance per stream task, used by its single stream thread. This is
 * why {@link #next()} needs no lock or atomic. It allocates nothing.
 */
public final class IdGenerator {

    private final IdLayout layout;
    private final long datacenterId;
    private final long workerId;
    private final LongSupplier wallClockMillis;

    // Copied out of the layout once: next() is on the per-record path and must not recompute them.
    private final long epochMillis;
    private final long unitMillis;
    private final long maxTime;
    private final long maxSequence;
    private final int timeShift;
    private final int sequenceShift;
    /** Datacenter and worker fields already in place: constant for this generator. */
    private final long nodeBits;
    /** Where the datacenter and worker fields are, to recognise this generator's own IDs. */
    private final long nodeMask;

    // The last issued (or resumed-above) position; lastTime == -1 means "nothing yet", below any time.
    private long lastTime = -1;
    private long lastSequence;
    private long lastId = -1;

    private long borrowedUnits;
    private long clockBehindEvents;

    /**
     * @param layout          the ID layout
     * @param datacenterId    this generator's datacenter field, 0..{@link IdLayout#maxDatacenter()}
     * @param workerId        this generator's worker field, 0..{@link IdLayout#maxWorker()}
     * @param wallClockMillis the wall clock in Unix milliseconds, e.g. {@code CachedClock::millis} (the stamper's)
     *                        or {@code System::currentTimeMillis};
     *                        may step backwards or stand still
     * @throws IllegalArgumentException if the datacenter or worker ID does not fit the layout
     * @throws NullPointerException     if the layout or the clock is null
     */
    public IdGenerator(IdLayout layout, long datacenterId, long workerId, LongSupplier wallClockMillis) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.wallClockMillis = Objects.requireNonNull(wallClockMillis, "wallClockMillis");
        if (datacenterId < 0 || datacenterId > layout.maxDatacenter()) {
            throw new IllegalArgumentException("id.datacenter-id=" + datacenterId + " is out of range: accepted 0.."
                    + layout.maxDatacenter() + " (id.datacenter-bits=" + layout.datacenterBits() + ")");
        }
        if (workerId < 0 || workerId > layout.maxWorker()) {
            throw new IllegalArgumentException("worker id " + workerId + " is out of range: accepted 0.."
                    + layout.maxWorker() + " (id.worker-bits=" + layout.workerBits()
                    + "; worker id = id.worker-offset + partition)");
        }
        this.datacenterId = datacenterId;
        this.workerId = workerId;
        this.epochMillis = layout.epochMillis();
        this.unitMillis = layout.unitMillis();
        this.maxTime = layout.maxTime();
        this.maxSequence = layout.maxSequence();
        this.timeShift = layout.timeShift();
        this.sequenceShift = layout.sequenceShift();
        this.nodeBits = layout.encode(0, datacenterId, workerId, 0);
        this.nodeMask = layout.encode(0, layout.maxDatacenter(), layout.maxWorker(), 0);
    }

    /**
     * The next ID: greater than every ID this generator issued or was {@linkplain #resumeAbove resumed above}.
     * Reads the clock exactly once; never sleeps.
     *
     * @throws IdSpaceExhaustedException if the time field would exceed the layout's maximum; the
     *                                   generator is then unchanged and no ID was issued
     */
    public long next() {
        long now = wallClockMillis.getAsLong();
        // Comparing first keeps a pre-epoch (or absurd) clock from overflowing the subtraction: epochMillis >= 0.
        // Division is skipped for the common 1 ms unit, where it would be the slowest instruction here.
        long t = now <= epochMillis ? 0 : unitMillis == 1 ? now - epochMillis : (now - epochMillis) / unitMillis;
        if (t > lastTime) {
            if (t > maxTime) {
                throw new IdSpaceExhaustedException(layout, t);
            }
            lastTime = t;
            lastSequence = 0;
        } else {
            if (t < lastTime) {
                clockBehindEvents++;
            }
            if (lastSequence < maxSequence) {
                lastSequence++;
            } else {
                if (lastTime >= maxTime) {
                    throw new IdSpaceExhaustedException(layout, lastTime + 1);
                }
                // Borrow the next unit rather than wait for it: the clock catches up later (lead shrinks).
                lastTime++;
                lastSequence = 0;
                borrowedUnits++;
            }
        }
        return lastId = (lastTime << timeShift) | nodeBits | (lastSequence << sequenceShift);
    }

    /**
     * The time unit the next {@link #next()} would take if called now (reads the clock once, issues nothing): what a
     * reservation must cover before that ID may leave. May exceed the layout's maximum time (then {@link #next()} throws).
     */
    public long nextTime() {
        long now = wallClockMillis.getAsLong();
        long t = now <= epochMillis ? 0 : unitMillis == 1 ? now - epochMillis : (now - epochMillis) / unitMillis;
        if (t > lastTime) {
            return t;
        }
        return lastSequence < maxSequence ? lastTime : lastTime + 1;
    }

    /**
     * Makes every later {@link #next()} return a value numerically greater than {@code id}, e.g. the
     * highest ID found in the changelog or the output topic on task start. IDs keep increasing:
     * <ul>
     *   <li>an ID of this generator (same datacenter and worker) continues from its {@code (time, sequence)};
     *   <li>any other non-negative long (another worker's ID, or a number from elsewhere) continues
     *       from {@code (its time, maxSequence)}, so the next ID moves on to the following time unit;
     *   <li>a negative {@code id}, or one not above {@link #lastId()}, changes nothing: the generator
     *       never goes backwards.
     * </ul>
     * An {@code id} in the future makes the generator run ahead of the clock ({@link #leadMillis()} &gt; 0).
     *
     * @throws IdSpaceExhaustedException if no ID of this generator is greater than {@code id}; the
     *                                   generator is then unchanged
     */
    public void resumeAbove(long id) {
        if (id < 0 || id <= lastId) {
            return;
        }
        long time = id >>> timeShift;
        boolean own = time <= maxTime && (id & nodeMask) == nodeBits;
        long sequence = own ? (id >>> sequenceShift) & maxSequence : maxSequence;
        if (time > maxTime || (time == maxTime && sequence == maxSequence)) {
            throw new IdSpaceExhaustedException(layout, sequence == maxSequence ? time + 1 : time);
        }
        // Only ever move forward: after resuming above a foreign ID, a later own ID can be numerically
        // larger yet sit at an earlier (time, sequence); keeping the later position stays above both.
        if (time > lastTime || (time == lastTime && sequence > lastSequence)) {
            lastTime = time;
            lastSequence = sequence;
        }
        lastId = id;
    }

    /** The last issued or resumed-above ID (the larger of the two), or -1 before the first. */
    public long lastId() {
        return lastId;
    }

    /** The time field (units since the epoch) of the generator's current position, or -1 before the first ID. */
    public long lastTime() {
        return lastTime;
    }

    /**
     * How far the logical clock is ahead of the wall clock, in milliseconds:
     * {@code layout.toWallMillis(lastTime()) - now}, reading the clock once; 0 before the first ID or resume point.
     *
     * <p>Signed. Greater than 0 when the generator runs ahead because it borrowed units or the clock
     * went backwards; between {@code -(unitMillis - 1)} and 0 while it follows the clock; more negative
     * the longer the generator is idle. A policy such as {@code id.max-lead} compares it with a positive threshold.
     */
    public long leadMillis() {
        if (lastTime < 0) {
            return 0;
        }
        long logical = layout.toWallMillis(lastTime);
        long now = wallClockMillis.getAsLong();
        long lead = logical - now;
        // saturate instead of wrapping, so an absurd clock reading cannot show up as a small lead of the wrong sign
        if (((logical ^ now) & (logical ^ lead)) < 0) {
            return logical < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return lead;
    }

    public IdLayout layout() {
        return layout;
    }

    public long workerId() {
        return workerId;
    }

    public long datacenterId() {
        return datacenterId;
    }

    /** How many times a sequence overflow made {@link #next()} borrow the next time unit. */
    public long borrowedUnits() {
        return borrowedUnits;
    }

    /**
     * How many {@link #next()} calls saw the wall clock (in time units) behind {@link #lastTime()}.
     * This counts clock rollbacks, and also every call made while the generator still runs ahead
     * after borrowing, because then too the clock is behind the logical time.
     */
    public long clockBehindEvents() {
        return clockBehindEvents;
    }

    @Override
    public String toString() {
        return "IdGenerator[" + layout.fingerprint() + ", datacenter=" + datacenterId + ", worker=" + workerId
                + ", lastId=" + lastId + "]";
    }
}
