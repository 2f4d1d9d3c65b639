package io.snowstamp.config;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static io.snowstamp.config.SnowstampConfigTest.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RegistrySettingsTest {
    @Test
    void shouldClaimWithTheRegistryByDefault() {
        RegistrySettings registry = config().registry();
        assertThat(registry.enabled()).isTrue();
        assertThat(registry.space()).isEqualTo("default");
        assertThat(registry.topic()).isEqualTo("snowstamp-workers");
        assertThat(registry.autoOffset()).isFalse();
        assertThat(registry.expireAfter()).isNull();
        assertThat(registry.heartbeatTimeout()).as("half a heartbeat and a second").isEqualTo(Duration.ofSeconds(6));
        assertThat(registry.grace()).as("a heartbeat, two heartbeat timeouts and a second").isEqualTo(Duration.ofSeconds(23));
    }

    @Test
    void shouldLetTheRegistryChooseWithAuto() {
        SnowstampConfig config = config("id.worker-offset", "AUTO", "id.space", "billing", "registry.expire-after", "1h");
        assertThat(config.registry().autoOffset()).isTrue();
        assertThat(config.ids().workerOffset()).as("until the registry has chosen").isZero();
        assertThat(config.withWorkerOffset(12).ids().workerOffset()).isEqualTo(12);
        assertThat(config.registry().space()).isEqualTo("billing");
        assertThat(config.registry().expireAfter()).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void shouldRefuseSettingsThatCannotWork() {
        assertThatThrownBy(() -> config("id.worker-offset", "auto", "id.worker-registry", "off"))
                .hasMessage("id.worker-offset=auto is invalid: accepted a whole number when id.worker-registry=off (auto needs the registry)");
        assertThatThrownBy(() -> config("id.worker-registry", "maybe")).hasMessage("id.worker-registry=maybe is invalid: accepted on or off");
        assertThatThrownBy(() -> config("id.space", "a/b")).hasMessage("id.space=a/b is invalid: accepted 1-100 of a-z A-Z 0-9 . _ -");
        assertThatThrownBy(() -> config("registry.expire-after", "20s"))
                .hasMessage("registry.expire-after=20s is invalid: accepted at least 3 x registry.heartbeat (30s) or empty (off)");
        assertThatThrownBy(() -> config("id.worker-offset", "soon")).hasMessageStartingWith("id.worker-offset=soon is invalid");
    }
}
