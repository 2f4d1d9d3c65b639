package io.snowstamp.config;

import io.snowstamp.id.IdLayout;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Whether the configured ID layout can issue IDs now, checked before a stamper starts: an epoch in
 * the future would stamp a time field of zero until it arrives (and blame the clock), and a layout
 * whose time field has run out would fail on the first record. Only the commands that issue IDs
 * ask: {@code decode} and the changelog tools must still read the IDs of a retired layout.
 */
public final class LayoutLifetime {
    /** The keys that decide the lifetime, in the order they are blamed when several were set. */
    private static final List<String> LIFETIME_KEYS = List.of(Keys.ID_EPOCH, Keys.ID_TIME_BITS, Keys.ID_TIME_UNIT, Keys.ID_PRESET);

    private LayoutLifetime() {
    }

    /**
     * Refuses a layout that cannot issue an ID at {@code nowMillis}; returns a warning when it runs
     * out sooner than {@code id.lifetime-warning}. Sequence mode issues no snowflake IDs: nothing to check.
     *
     * @throws ConfigException naming the key at fault, its value, what is accepted and where it came from
     */
    public static Optional<String> check(ConfigLoader.Loaded loaded, long nowMillis) {
        SnowstampConfig config = loaded.config();
        if (config.idMode() != SnowstampConfig.IdMode.SNOWFLAKE) {
            return Optional.empty();
        }
        IdLayout layout = config.ids().layout();
        if (layout.epochMillis() > nowMillis) {
            String key = loaded.isSet(Keys.ID_EPOCH) ? Keys.ID_EPOCH : Keys.ID_PRESET;
            throw new ConfigException(key, loaded.values().get(key), "an epoch not after now (" + Instant.ofEpochMilli(nowMillis)
                    + "): the layout's epoch " + Instant.ofEpochMilli(layout.epochMillis())
                    + " is in the future, and IDs would carry a time of zero until then").from(loaded.sourceOf(key));
        }
        long end = layout.maxWallMillis();
        if (end < nowMillis) {
            String key = LIFETIME_KEYS.stream().filter(loaded::isSet).findFirst().orElse(Keys.ID_PRESET);
            throw new ConfigException(key, loaded.values().get(key), "a layout whose time field lasts past now: this one ran out at "
                    + Instant.ofEpochMilli(end) + " (" + layout.timeBits() + " time bits of " + layout.unitMillis() + " ms from "
                    + Instant.ofEpochMilli(layout.epochMillis()) + "); give it more id.time-bits, a later id.epoch or a coarser"
                    + " id.time-unit").from(loaded.sourceOf(key));
        }
        Duration warnBelow = new Values(loaded.values()).duration(Keys.ID_LIFETIME_WARNING, Duration.ZERO, Duration.ofDays(36_500));
        long left = end - nowMillis;
        if (left < warnBelow.toMillis()) {
            return Optional.of("the ID layout runs out at " + Instant.ofEpochMilli(end) + ", in " + Durations.format(
                    Duration.ofDays(left / 86_400_000L).isZero() ? Duration.ofHours(left / 3_600_000L) : Duration.ofDays(left / 86_400_000L))
                    + " (less than " + Keys.ID_LIFETIME_WARNING + "=" + Durations.format(warnBelow) + "): after that the stamper stops;"
                    + " plan a layout with a later end (more id.time-bits, a later id.epoch) for a new application.id before then");
        }
        return Optional.empty();
    }
}
