package io.snowstamp.cli;

import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ChangelogEntry;
import io.snowstamp.state.WorkerState;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** How worker states, IDs and times are written by the changelog and recover commands. */
final class StateText {
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private StateText() {
    }

    /** ISO-8601 UTC with milliseconds always shown, so columns align. */
    static String iso(long millis) {
        return ISO.format(Instant.ofEpochMilli(millis));
    }

    /** {@link #iso}, or null for 0 (a time that was never set). */
    static String isoOrNull(long millis) {
        return millis == 0 ? null : iso(millis);
    }

    /** Unix millis of an ID's time field, or null for -1 or an ID that does not fit the layout. */
    static Long idMillis(IdLayout layout, long id) {
        if (id < 0) {
            return null;
        }
        try {
            return layout.decode(id).wallMillis();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** An ID's time as ISO-8601, {@code -} for none, {@code ?} when it does not decode. */
    static String idTime(IdLayout layout, long id) {
        Long millis = idMillis(layout, id);
        return millis == null ? (id < 0 ? "-" : "?") : iso(millis);
    }

    /** The ID, or {@code -} for none (-1). */
    static String id(long id) {
        return id < 0 ? "-" : Long.toString(id);
    }

    /** The layout a state's IDs were issued with; the configured one when the stored fingerprint does not parse. */
    static IdLayout layoutOf(WorkerState state, IdLayout configured) {
        if (state.layoutFingerprint().equals(configured.fingerprint())) {
            return configured;
        }
        try {
            return IdLayout.fromFingerprint(state.layoutFingerprint());
        } catch (RuntimeException e) {
            return configured;
        }
    }

    /** {@code 850ms}, {@code 12.3s}, {@code 4m05s}, {@code 3h20m}, {@code 2d04h}. */
    static String duration(long millis) {
        long ms = Math.abs(millis);
        String text;
        if (ms < 1_000) {
            text = ms + "ms";
        } else if (ms < 60_000) {
            text = String.format("%d.%ds", ms / 1000, ms % 1000 / 100);
        } else if (ms < 3_600_000) {
            text = String.format("%dm%02ds", ms / 60_000, ms % 60_000 / 1000);
        } else if (ms < 86_400_000) {
            text = String.format("%dh%02dm", ms / 3_600_000, ms % 3_600_000 / 60_000);
        } else {
            text = String.format("%dd%02dh", ms / 86_400_000, ms % 86_400_000 / 3_600_000);
        }
        return millis < 0 ? "-" + text : text;
    }

    /** {@code +1.0s}, {@code -3m05s}. */
    static String signed(long millis) {
        return millis >= 0 ? "+" + duration(millis) : duration(millis);
    }

    /** {@code 12.3s ago}, or {@code in 1.0s} for a time ahead of now. */
    static String ago(long now, long then) {
        return then <= now ? duration(now - then) + " ago" : "in " + duration(then - now);
    }

    /** One warning per partition whose state was written with another layout than the configured one. */
    static List<String> layoutWarnings(Map<Integer, ChangelogEntry> latest, IdLayout configured) {
        List<String> warnings = new ArrayList<>();
        latest.forEach((key, entry) -> {
            String stored = entry.state().layoutFingerprint();
            if (!stored.equals(configured.fingerprint())) {
                warnings.add("partition " + key + " was written with ID layout " + stored + " but the configured layout is "
                        + configured.fingerprint() + " (IDs shown decoded with the stored layout; the stamper would refuse to start)");
            }
        });
        return warnings;
    }
}
