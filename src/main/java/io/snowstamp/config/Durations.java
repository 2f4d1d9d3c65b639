package io.snowstamp.config;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The one duration syntax of snowstamp, for configuration keys and command-line flags alike. */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)?");

    /** Text describing the accepted form, for error messages. */
    public static final String ACCEPTED = "a duration such as 500ms, 10s, 5m, 1h (a bare number is milliseconds)";

    private Durations() {
    }

    /** Parses {@code 250ms}, {@code 10s}, {@code 5m}, {@code 1h}, {@code 1d}; a bare number is milliseconds; null if malformed. */
    public static Duration parse(String text) {
        Matcher m = FORM.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            return null;
        }
        long amount = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "ms" : m.group(2);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }

    /** The largest whole unit: {@code 1500ms}, {@code 10s}, {@code 5m}, {@code 1h}, {@code 1d}. */
    public static String format(Duration duration) {
        long ms = duration.toMillis();
        if (ms == 0 || ms % 1000 != 0) {
            return ms + "ms";
        }
        if (ms % 60_000 != 0) {
            return ms / 1000 + "s";
        }
        if (ms % 3_600_000 != 0) {
            return ms / 60_000 + "m";
        }
        return ms % 86_400_000 != 0 ? ms / 3_600_000 + "h" : ms / 86_400_000 + "d";
    }
}
