package io.snowstamp.bench;

import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.testing.TestConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** What the measured stamper processes of {@code bench --footprint-partitions} run with. */
class FootprintSettingsTest {
    @TempDir
    Path dir;

    private Properties written(Map<String, String> settings) throws Exception {
        Footprint footprint = new Footprint(TestConfig.of().connection(), dir, List.of("-Xmx64m"), "Main", Duration.ofSeconds(1),
                ConnectionSettings.Guarantee.AT_LEAST_ONCE, settings);
        Properties props = new Properties();
        try (Reader reader = Files.newBufferedReader(footprint.writeSettings(dir, "app", "in", "out", "dlq"))) {
            props.load(reader);
        }
        return props;
    }

    @Test
    void shouldGiveTheStamperTheSettingsOfFootprintSetOverTheBenchsOwn() throws Exception {
        Properties props = written(Map.of("stamp.provenance", "false", "id.worker-registry", "on"));

        assertThat(props).containsEntry("stamp.provenance", "false").containsEntry("id.worker-registry", "on")
                .containsEntry("processing.guarantee", "at_least_once").containsEntry("application.id", "app");
    }

    @Test
    void shouldClaimNothingInTheUsersRegistryByDefault() throws Exception {
        assertThat(written(Map.of())).containsEntry("id.worker-registry", "off").doesNotContainKey("stamp.provenance");
    }
}
