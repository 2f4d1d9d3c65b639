package io.snowstamp.config;

import io.snowstamp.id.IdLayout;
import io.snowstamp.id.InvalidLayoutException;

import java.time.Duration;
import java.util.Locale;

/**
 * How snowflake IDs are issued (the {@code id.*} layout and worker keys, the lead policy, the
 * reservation and {@code lease.heartbeat}). With {@code id.worker-offset=auto} {@code workerOffset}
 * is 0 until the worker registry has chosen ({@link #withWorkerOffset}).
 *
 * @param layout       the ID layout (preset, epoch, unit, widths)
 * @param datacenterId datacenter field of every ID
 * @param workerOffset worker ID = worker offset + input partition
 * @param maxLead      how far IDs may run ahead of the wall clock before {@code onExcessLead} applies
 * @param onExcessLead what to do then
 * @param reservation  IDs reserved ahead in the state per write (0: write the state for every record)
 * @param heartbeat    how often a task refreshes {@code heartbeatAt} in its worker state
 */
public record IdSettings(IdLayout layout, long datacenterId, long workerOffset, Duration maxLead, OnExcessLead onExcessLead,
                         Duration reservation, Duration heartbeat) {

    /** What to do when IDs run further ahead of the wall clock than {@code id.max-lead}. */
    public enum OnExcessLead {
        CONTINUE, PAUSE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public IdSettings {
        if (workerOffset > layout.maxWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, workerOffset,
                    "0.." + layout.maxWorker() + " (the layout has " + layout.workerBits() + " worker bits)");
        }
        if (datacenterId > layout.maxDatacenter()) {
            throw new ConfigException(Keys.ID_DATACENTER_ID, datacenterId,
                    "0.." + layout.maxDatacenter() + " (the layout has " + layout.datacenterBits() + " datacenter bits)");
        }
    }

    /** @param autoOffset {@code id.worker-offset=auto}: the offset is 0 until the registry chooses */
    static IdSettings from(Values v, boolean autoOffset) {
        return new IdSettings(layout(v),
                v.longInRange(Keys.ID_DATACENTER_ID, 0, Long.MAX_VALUE),
                autoOffset ? 0 : v.longInRange(Keys.ID_WORKER_OFFSET, 0, Long.MAX_VALUE),
                v.duration(Keys.ID_MAX_LEAD, Duration.ofMillis(1), Duration.ofDays(1)),
                v.choice(Keys.ID_ON_EXCESS_LEAD, OnExcessLead.class),
                v.duration(Keys.ID_RESERVATION, Duration.ZERO, Duration.ofHours(1)),
                v.duration(Keys.LEASE_HEARTBEAT, Duration.ofMillis(100), Duration.ofHours(1)));
    }

    private static IdLayout layout(Values v) {
        IdLayout layout;
        try {
            layout = IdLayout.preset(v.string(Keys.ID_PRESET));
        } catch (InvalidLayoutException e) {
            throw new ConfigException(Keys.ID_PRESET, v.string(Keys.ID_PRESET), "one of " + String.join(", ", IdLayout.presetNames()));
        }
        try {
            if (v.isSet(Keys.ID_EPOCH)) {
                layout = layout.withEpochMillis(v.instantMillis(Keys.ID_EPOCH));
            }
            if (v.isSet(Keys.ID_TIME_UNIT)) {
                layout = layout.withUnitMillis(v.duration(Keys.ID_TIME_UNIT, Duration.ofMillis(1), Duration.ofSeconds(1)).toMillis());
            }
            // all widths at once: one at a time, the preset's other widths would make valid
            // combinations fail in between (41/5/5/12 from snowflake's 41/0/10/12)
            int timeBits = v.isSet(Keys.ID_TIME_BITS) ? v.intInRange(Keys.ID_TIME_BITS, 0, 63) : layout.timeBits();
            int datacenterBits = v.isSet(Keys.ID_DATACENTER_BITS)
                    ? v.intInRange(Keys.ID_DATACENTER_BITS, 0, 63) : layout.datacenterBits();
            int workerBits = v.isSet(Keys.ID_WORKER_BITS) ? v.intInRange(Keys.ID_WORKER_BITS, 0, 63) : layout.workerBits();
            int sequenceBits = v.isSet(Keys.ID_SEQUENCE_BITS)
                    ? v.intInRange(Keys.ID_SEQUENCE_BITS, 0, 63) : layout.sequenceBits();
            layout = new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits,
                    layout.epochMillis(), layout.unitMillis(), layout.workerInLowBits());
            if (v.isSet(Keys.ID_WORKER_IN_LOW_BITS)) {
                layout = layout.withWorkerInLowBits(v.bool(Keys.ID_WORKER_IN_LOW_BITS));
            }
        } catch (InvalidLayoutException e) {
            throw new ConfigException(e.getMessage());
        }
        return layout;
    }

    /** The worker ID of the generator for an input partition. */
    public long workerFor(int partition) {
        return workerOffset + partition;
    }

    /** {@link #workerFor}, refused with the key to change when the layout has no such worker (a task of that partition starts). */
    public long checkedWorkerFor(int partition) {
        long worker = workerFor(partition);
        if (worker > layout.maxWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, workerOffset(),
                    "a value that leaves room for partition " + partition + ": worker = offset + partition must be <= "
                            + layout.maxWorker() + " with " + layout.workerBits() + " worker bits");
        }
        return worker;
    }

    /** A copy with the worker offset the registry granted ({@code id.worker-offset=auto}). */
    public IdSettings withWorkerOffset(long offset) {
        return new IdSettings(layout, datacenterId, offset, maxLead, onExcessLead, reservation, heartbeat);
    }
}
