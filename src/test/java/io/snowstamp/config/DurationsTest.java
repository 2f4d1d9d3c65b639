package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({
            "500ms, 500",
            "10s, 10000",
            "5m, 300000",
            "1h, 3600000",
            "1d, 86400000",
            "250, 250",
            "0, 0",
            "' 10 S ', 10000",
            "1MS, 1",
            "999999999999ms, 999999999999",
    })
    void shouldParseTheAcceptedForms(String text, long millis) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "-1s", "1.5s", "10 sec", "1w", "s", "1e3", "1000000000000", "10s5ms"})
    void shouldReturnNullForAMalformedDuration(String text) {
        assertThat(Durations.parse(text)).isNull();
    }

    @Test
    void shouldFormatInTheLargestWholeUnitUpToMinutes() {
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0ms");
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.format(Duration.ofSeconds(10))).isEqualTo("10s");
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Durations.format(Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(Durations.format(Duration.ofHours(1))).isEqualTo("1h");
        assertThat(Durations.format(Duration.ofDays(2))).isEqualTo("2d");
    }

    @Test
    void shouldParseWhatItFormats() {
        for (long ms : new long[] {0, 1, 999, 1000, 1500, 60_000, 61_000, 3_600_000}) {
            Duration d = Duration.ofMillis(ms);
            assertThat(Durations.parse(Durations.format(d))).as("%d ms", ms).isEqualTo(d);
        }
    }
}
