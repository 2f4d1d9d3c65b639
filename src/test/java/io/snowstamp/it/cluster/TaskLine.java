package io.snowstamp.it.cluster;

import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One line of a stamper's text log about one partition's task ({@code partition 2 worker 5: ...}), with the wall-clock
 * time it was written and what it says about the task's lease or reservation.
 *
 * @param partition the task's input partition
 * @param atMillis  when it was written (epoch milliseconds, from the line's time of day)
 * @param kind      what it says
 * @param text      the line
 */
record TaskLine(int partition, long atMillis, Kind kind, String text) {
    /** What a line says; the text log's messages, matched in this order. */
    enum Kind {
        /** {@code lease-lost}: a round read a newer lease; the task closes. */
        LOST("shows a newer lease|was lost to"),
        /** {@code lease-unconfirmed}: no confirmation for 20 s; the task closes. */
        UNCONFIRMED("no confirmation of lease"),
        /** {@code lease-lapsed-while-issuing}: the term ran out between the checks around one ID; the task closes. */
        LAPSED("while an ID was being taken"),
        /** {@code reservation-unacknowledged}: the reservation an ID waited for was not read back in 20 s; the task closes. */
        UNACKNOWLEDGED("was not acknowledged by the changelog and read back"),
        /** A new lease record, written at a task's start. */
        TAKEN("lease epoch \\d+ taken by"),
        /** {@code lease-confirmed}: a new lease's takeover wait is over, the task issues IDs. */
        ISSUING("confirmed by the changelog after \\d+ ms .*issuing"),
        OTHER("");

        private final Pattern pattern;

        Kind(String regex) {
            this.pattern = Pattern.compile(regex);
        }
    }

    private static final Pattern LINE = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .* - partition (\\d+) worker \\d+: .*");
    private static final long DAY_MILLIS = TimeUnit.DAYS.toMillis(1);

    /**
     * The task lines of {@code log}, their times of day (this machine's zone, as the stampers' logs write them) read as
     * the instants nearest {@code nearMillis} (a log spanning midnight reads right).
     */
    static List<TaskLine> parse(String log, long nearMillis) {
        long nearOfDay = Math.floorMod(nearMillis + ZoneId.systemDefault().getRules()
                .getOffset(java.time.Instant.ofEpochMilli(nearMillis)).getTotalSeconds() * 1000L, DAY_MILLIS);
        List<TaskLine> lines = new ArrayList<>();
        for (String line : log.lines().toList()) {
            Matcher matcher = LINE.matcher(line);
            if (!matcher.matches()) {
                continue;
            }
            long ofDay;
            try {
                ofDay = LocalTime.parse(matcher.group(1)).toNanoOfDay() / 1_000_000;
            } catch (DateTimeParseException e) {
                continue;
            }
            long delta = Math.floorMod(ofDay - nearOfDay + DAY_MILLIS / 2, DAY_MILLIS) - DAY_MILLIS / 2;
            Kind kind = Kind.OTHER;
            for (Kind candidate : Kind.values()) {
                if (candidate != Kind.OTHER && candidate.pattern.matcher(line).find()) {
                    kind = candidate;
                    break;
                }
            }
            lines.add(new TaskLine(Integer.parseInt(matcher.group(2)), nearMillis + delta, kind, line));
        }
        return lines;
    }

    /** The line, prefixed with its time in seconds after {@code originMillis}. */
    String since(long originMillis) {
        return String.format(Locale.ROOT, "+%.1fs %s", (atMillis - originMillis) / 1e3, text);
    }
}
