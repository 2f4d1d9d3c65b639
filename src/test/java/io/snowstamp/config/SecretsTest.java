package io.snowstamp.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretsTest {

    @ParameterizedTest
    @ValueSource(strings = {"sasl.jaas.config", "ssl.keystore.password", "ssl.truststore.password", "ssl.key.password",
            "ssl.keystore.key", "sasl.oauthbearer.client.credentials.client.secret", "SASL.JAAS.CONFIG",
            "sasl.oauthbearer.assertion.file.token", "basic.auth.credentials.source"})
    void shouldTreatPasswordsJaasKeysTokensAndCredentialsAsSecret(String key) {
        assertThat(Secrets.isSecret(key)).isTrue();
        assertThat(Secrets.mask(key, "s3cr3t")).isEqualTo("[hidden]");
    }

    @ParameterizedTest
    @ValueSource(strings = {"bootstrap.servers", "sasl.mechanism", "security.protocol", "ssl.keystore.location",
            "ssl.keystore.type", "linger.ms", "ssl.endpoint.identification.algorithm"})
    void shouldShowOrdinaryValues(String key) {
        assertThat(Secrets.isSecret(key)).isFalse();
        assertThat(Secrets.mask(key, "value-1")).isEqualTo("value-1");
    }
}
