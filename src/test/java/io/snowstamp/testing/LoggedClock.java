package io.snowstamp.testing;

import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The wall clock a stamper reported when it resumed a partition: its resume log line names the
 * clock reading ({@code ... clock=2026-01-01T10:00:00.123Z ...}). Under faketime this is the only
 * reliable way to see, from outside, which time the child JVM believed it was.
 */
public final class LoggedClock {
    private static final Pattern CLOCK = Pattern.compile("clock=(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?Z)");

    private LoggedClock() {
    }

    /** Every clock reading in a log, in order. */
    public static List<Instant> readings(String log) {
        return CLOCK.matcher(log).results().map(m -> Instant.parse(m.group(1))).toList();
    }
}
