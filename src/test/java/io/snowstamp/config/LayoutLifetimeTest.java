package io.snowstamp.config;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LayoutLifetimeTest {
    private static final long NOW = Instant.parse("2026-11-23T00:00:00Z").toEpochMilli();

    private static ConfigLoader.Loaded load(Map<String, String> env, Map<String, String> flags) {
        return ConfigLoader.read(null, env, flags, Map.of());
    }

    @Test
    void shouldAcceptTheShippedLayoutSilently() {
        assertThat(LayoutLifetime.check(load(Map.of(), Map.of()), NOW)).isEmpty();
    }

    @Test
    void shouldRefuseAnEpochInTheFutureNamingWhereItCameFrom() {
        assertThatThrownBy(() -> LayoutLifetime.check(load(Map.of("SNOWSTAMP_ID_EPOCH", "2099-01-01T00:00:00Z"), Map.of()), NOW))
                .isInstanceOf(ConfigException.class)
                .hasMessage("id.epoch=2099-01-01T00:00:00Z is invalid: accepted an epoch not after now (2026-11-23T00:00:00Z): the"
                        + " layout's epoch 2099-01-01T00:00:00Z is in the future, and IDs would carry a time of zero until then"
                        + " (from environment variable SNOWSTAMP_ID_EPOCH)");
    }

    @Test
    void shouldRefuseALayoutThatHasRunOutAndSayWhen() {
        assertThatThrownBy(() -> LayoutLifetime.check(load(Map.of(), Map.of("id.time-bits", "30")), NOW))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("id.time-bits=30 is invalid: accepted a layout whose time field lasts past now:"
                        + " this one ran out at 2020-01-13T10:15:41.823Z")
                .hasMessageEndingWith("(from the command line)");
        // 35 bits of 1 ms last 397 days: with an epoch in 2024 that is over; the epoch is blamed first
        assertThatThrownBy(() -> LayoutLifetime.check(load(Map.of(), Map.of("id.epoch", "2024-01-01T00:00:00Z", "id.time-bits", "35")), NOW))
                .hasMessageStartingWith("id.epoch=2024-01-01T00:00:00Z is invalid: accepted a layout whose time field lasts past now:"
                        + " this one ran out at 2025-02-");
    }

    @Test
    void shouldWarnWhenLessThanTheConfiguredLifetimeIsLeft() {
        // 38 bits of 1 ms last 3181 days: from 2018-04-01 to 2026-12-16, less than a year after NOW
        ConfigLoader.Loaded soon = load(Map.of(), Map.of("id.time-bits", "38", "id.datacenter-bits", "3",
                "id.epoch", "2018-04-01T00:00:00Z"));
        assertThat(LayoutLifetime.check(soon, NOW)).hasValueSatisfying(warning -> assertThat(warning)
                .startsWith("the ID layout runs out at 2026-12-").contains("(less than id.lifetime-warning=365d)"));
        ConfigLoader.Loaded relaxed = load(Map.of(), Map.of("id.time-bits", "38", "id.datacenter-bits", "3",
                "id.epoch", "2018-04-01T00:00:00Z", "id.lifetime-warning", "1d"));
        assertThat(LayoutLifetime.check(relaxed, NOW)).isEmpty();
    }

    @Test
    void shouldNotCheckSequenceMode() {
        assertThat(LayoutLifetime.check(load(Map.of(), Map.of("id.mode", "sequence", "id.time-bits", "30")), NOW)).isEmpty();
    }

    @Test
    void shouldRefuseAMalformedWarningThresholdAtLoad() {
        assertThatThrownBy(() -> load(Map.of(), Map.of("id.lifetime-warning", "soon")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("id.lifetime-warning=soon is invalid");
    }
}
