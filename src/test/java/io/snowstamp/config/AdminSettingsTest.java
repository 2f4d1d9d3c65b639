package io.snowstamp.config;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.snowstamp.config.SnowstampConfigTest.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AdminSettingsTest {

    @Test
    void shouldBeOffOnLoopbackByDefault() {
        AdminSettings admin = config().admin();

        assertThat(admin).isEqualTo(AdminSettings.off());
        assertThat(admin.enabled()).isFalse();
        assertThat(admin.bind()).isEqualTo("127.0.0.1");
        assertThat(admin.describe()).isEqualTo("off");
    }

    @Test
    void shouldReadPortBindAndAdvertisedHost() {
        AdminSettings admin = config("admin.port", "8080", "admin.bind", "0.0.0.0", "admin.advertised-host", "stamper-1").admin();

        assertThat(admin).isEqualTo(new AdminSettings(8080, "0.0.0.0", "stamper-1"));
        assertThat(admin.enabled()).isTrue();
        assertThat(admin.describe()).isEqualTo("0.0.0.0:8080");
        assertThat(config("admin.port", "0").admin().port()).as("0 = any free port").isZero();
    }

    @Test
    void shouldTakeThePortAndBindFromTheEnvironment() {
        SnowstampConfig loaded = ConfigLoader.load(null, Map.of("SNOWSTAMP_ADMIN_PORT", "9464", "SNOWSTAMP_ADMIN_BIND", "0.0.0.0",
                "SNOWSTAMP_ADMIN_ADVERTISED_HOST", "snowstamp", "SNOWSTAMP_INSTANCE_ID", "env-1"), Map.of());

        assertThat(loaded.admin()).isEqualTo(new AdminSettings(9464, "0.0.0.0", "snowstamp"));
    }

    @Test
    void shouldAdvertiseTheBindAddressUnlessItIsAWildcard() {
        assertThat(new AdminSettings(1, "127.0.0.1", null).advertisedHost("host-a")).isEqualTo("127.0.0.1");
        assertThat(new AdminSettings(1, "10.1.2.3", null).advertisedHost("host-a")).isEqualTo("10.1.2.3");
        assertThat(new AdminSettings(1, "0.0.0.0", null).advertisedHost("host-a")).isEqualTo("host-a");
        assertThat(new AdminSettings(1, "::", null).advertisedHost("host-a")).isEqualTo("host-a");
        assertThat(new AdminSettings(1, "0.0.0.0", "pod-7.stampers").advertisedHost("host-a")).isEqualTo("pod-7.stampers");
    }

    @Test
    void shouldRefuseInvalidValuesNamingKeyValueAndRange() {
        assertThatThrownBy(() -> config("admin.port", "65536")).isInstanceOf(ConfigException.class)
                .hasMessage("admin.port=65536 is invalid: accepted a whole number 0..65535");
        assertThatThrownBy(() -> config("admin.port", "http")).isInstanceOf(ConfigException.class)
                .hasMessage("admin.port=http is invalid: accepted a whole number 0..65535");
        assertThatThrownBy(() -> config("admin.bind", "")).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("admin.bind= is invalid: accepted an IP address or host name");
        assertThatThrownBy(() -> config("admin.bind", "http://x")).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("admin.bind=http://x is invalid");
        assertThatThrownBy(() -> config("admin.advertised-host", "a b")).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("admin.advertised-host=a b is invalid");
    }

    @Test
    void shouldShowTheAdminServerInTheMaskedDescription() {
        assertThat(config("admin.port", "8080").describeMasked()).contains(" admin=127.0.0.1:8080 ");
    }
}
