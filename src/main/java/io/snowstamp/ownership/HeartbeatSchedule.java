package io.snowstamp.ownership;

import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;

import java.time.Duration;

/**
 * When a task writes its heartbeat (its worker state with the time, so that {@code changelog inspect}
 * and the next owner see when it was last alive): every {@code interval}, the first one no sooner than
 * one interval after the start, shifted by 0/16 to 15/16 of the interval by partition. Tasks that start
 * together would otherwise all write their heartbeat in the same commit, every interval: at 1,024
 * partitions one transaction over 1,024 changelog partitions every 5 s, whose commit markers held up
 * the next transaction ({@code CONCURRENT_TRANSACTIONS} retries, benchmarks.md "Footprint").
 */
public final class HeartbeatSchedule {
    private static final int PHASES = 16;

    private Cancellable first;
    private Cancellable every;

    /** Schedules {@code beat} (wall-clock punctuations of {@code context}) for the task of {@code partition}. */
    public void start(ProcessorContext<?, ?> context, Duration interval, int partition, Runnable beat) {
        cancel();
        first = context.schedule(phase(interval, partition), PunctuationType.WALL_CLOCK_TIME, timestamp -> {
            first.cancel();
            first = null;
            beat.run();
            every = context.schedule(interval, PunctuationType.WALL_CLOCK_TIME, ignored -> beat.run());
        });
    }

    /** The task closes: no further heartbeat. */
    public void cancel() {
        if (first != null) {
            first.cancel();
            first = null;
        }
        if (every != null) {
            every.cancel();
            every = null;
        }
    }

    /** The interval plus 0/16 to 15/16 of it, by partition. */
    public static Duration phase(Duration interval, int partition) {
        long millis = interval.toMillis();
        return Duration.ofMillis(millis + millis * (partition % PHASES) / PHASES);
    }
}
