package io.snowstamp.ownership;


import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.LongSupplier;

/**
 * The lead policy of one task: how far its IDs run ahead of the wall clock ({@code lead}, from the
 * generator) and what the task says about it. The IDs stay unique whatever the lead; this class
 * only counts, reports and tells the processor when {@code id.on-excess-lead=pause} must hold
 * records back. Single-threaded, like the task.
 */
public final class LeadWatch {
    private static final Logger log = LoggerFactory.getLogger(LeadWatch.class);
    private static final long WARN_EVERY_MILLIS = 60_000;
    /** A lead this large cannot come from borrowing under load alone: the wall clock went back. */
    private static final long CLOCK_BEHIND_MILLIS = 1_000;

    private final int partition;
    private final long worker;
    private final long maxLeadMillis;
    private final long idsPerUnit;
    /** Counts one excess-lead event in the task's metrics. */
    private final Runnable excessLeadMetric;
    private final LongSupplier clock;
    private long excessLeadEvents;
    private long lastWarning = Long.MIN_VALUE;
    private boolean clockBehind;

    public LeadWatch(int partition, long worker, long maxLeadMillis, long idsPerUnit, Runnable excessLeadMetric, LongSupplier clock) {
        this.partition = partition;
        this.worker = worker;
        this.maxLeadMillis = maxLeadMillis;
        this.idsPerUnit = idsPerUnit;
        this.excessLeadMetric = excessLeadMetric;
        this.clock = clock;
    }

    /** Whether {@code lead} is past {@code id.max-lead}. */
    public boolean exceeded(long lead) {
        return lead > maxLeadMillis;
    }

    /** Policy {@code continue}, after an ID: count, and warn at most once a minute per task. */
    public void issued(long lead, long lastIssued) {
        checkClockBehind(lead, lastIssued);
        if (lead <= maxLeadMillis) {
            return;
        }
        excessLeadEvents++;
        excessLeadMetric.run();
        long now = clock.getAsLong();
        if (lastWarning == Long.MIN_VALUE || now - lastWarning >= WARN_EVERY_MILLIS || now < lastWarning) {
            lastWarning = now;
            log.warn("partition {} worker {}: IDs run {} ms ahead of the wall clock (id.max-lead={} ms; {} IDs past it so far):"
                    + " the clock went back or the partition issues more than {} IDs per time unit; IDs stay unique",
                    partition, worker, lead, maxLeadMillis, excessLeadEvents, idsPerUnit);
        }
    }

    /** Policy {@code pause}, when the task starts holding records back. */
    public void holdingBack(long lead) {
        excessLeadEvents++;
        excessLeadMetric.run();
        log.warn("partition {} worker {}: IDs run {} ms ahead of the wall clock (id.max-lead={} ms); holding records back"
                + " until the clock catches up (id.on-excess-lead=pause)", partition, worker, lead, maxLeadMillis);
    }

    /** One line when the wall clock falls clearly behind the IDs, one when it has caught up. */
    private void checkClockBehind(long lead, long lastIssued) {
        if (!clockBehind && lead > CLOCK_BEHIND_MILLIS) {
            clockBehind = true;
            log.atInfo().addKeyValue("event", "clock-behind").addKeyValue("partition", partition)
                    .addKeyValue("worker", worker).addKeyValue("leadMillis", lead)
                    .log("partition {} worker {}: the wall clock is {} ms behind the last ID {} (clock stepped back?);"
                            + " IDs continue above it until the clock catches up", partition, worker, lead, lastIssued);
        } else if (clockBehind && lead <= 0) {
            clockBehind = false;
            log.atInfo().addKeyValue("event", "clock-caught-up").addKeyValue("partition", partition)
                    .addKeyValue("worker", worker)
                    .log("partition {} worker {}: the wall clock caught up with the IDs", partition, worker);
        }
    }
}
