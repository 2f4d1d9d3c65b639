package io.snowstamp.config;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/** Parsers for configuration values; each failure is a {@link ConfigException} naming key, value and accepted form. */
final class Values {
    private static final Pattern TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private final Map<String, String> raw;

    Values(Map<String, String> raw) {
        this.raw = raw;
    }

    String string(String key) {
        String value = raw.get(key);
        return value == null ? "" : value.trim();
    }

    boolean isSet(String key) {
        return !string(key).isEmpty();
    }

    String topic(String key) {
        String value = string(key);
        if (!TOPIC.matcher(value).matches() || value.equals(".") || value.equals("..")) {
            throw new ConfigException(key, value, "a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)");
        }
        return value;
    }

    long longInRange(String key, long min, long max) {
        String value = string(key);
        try {
            long parsed = Long.parseLong(value);
            if (parsed >= min && parsed <= max) {
                return parsed;
            }
        } catch (NumberFormatException ignored) {
            // reported below with the accepted range
        }
        throw new ConfigException(key, value, "a whole number " + min + ".." + max);
    }

    int intInRange(String key, int min, int max) {
        return (int) longInRange(key, min, max);
    }

    boolean bool(String key) {
        String value = string(key).toLowerCase(Locale.ROOT);
        if (value.equals("true") || value.equals("false")) {
            return Boolean.parseBoolean(value);
        }
        throw new ConfigException(key, string(key), "true or false");
    }

    <E extends Enum<E>> E choice(String key, Class<E> type) {
        String value = string(key);
        for (E constant : type.getEnumConstants()) {
            if (constant.toString().equalsIgnoreCase(value)) {
                return constant;
            }
        }
        StringBuilder accepted = new StringBuilder();
        for (E constant : type.getEnumConstants()) {
            accepted.append(accepted.length() == 0 ? "" : ", ").append(constant);
        }
        throw new ConfigException(key, value, "one of " + accepted);
    }

    Duration duration(String key, Duration min, Duration max) {
        String value = string(key);
        Duration parsed = Durations.parse(value);
        if (parsed == null || parsed.compareTo(min) < 0 || parsed.compareTo(max) > 0) {
            throw new ConfigException(key, value, Durations.format(min) + ".." + Durations.format(max) + ", " + Durations.ACCEPTED);
        }
        return parsed;
    }

    long instantMillis(String key) {
        String value = string(key);
        try {
            return value.matches("\\d+") ? Long.parseLong(value) : Instant.parse(value).toEpochMilli();
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new ConfigException(key, value, "an ISO-8601 instant such as 2020-01-01T00:00:00Z, or Unix milliseconds");
        }
    }

}
