package io.snowstamp.admin;

import com.fasterxml.jackson.databind.JsonNode;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.PrometheusText;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The admin server over real HTTP, around a stamper that has not started (no broker needed): the
 * probes' answers before start, the metrics that exist from the beginning, routing and methods.
 * {@code AdminEndpointsIT} covers a running stamper.
 */
class AdminServerTest {
    private SnowstampConfig config;
    private StreamsRunner runner;
    private AdminServer server;
    private String base;

    @BeforeEach
    void startServer() {
        config = ConfigLoader.load(null, Map.of(), Map.of("instance.id", "unit-1", "admin.port", "0",
                "kafka.bootstrap.servers", "127.0.0.1:1", "kafka.sasl.jaas.config", "secret-jaas-value"));
        runner = new StreamsRunner(config, System::currentTimeMillis);
        server = AdminServer.start(config, runner, System::currentTimeMillis);
        base = "http://127.0.0.1:" + server.getPort();
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    @Test
    void shouldListenOnAFreeLoopbackPortWhenConfiguredWithZero() {
        assertThat(server.getPort()).isPositive();
        assertThat(server.advertisedAddress()).isEqualTo("127.0.0.1:" + server.getPort());
    }

    @Test
    void shouldBeLiveButNotReadyBeforeKafkaStreamsRuns() {
        Http.Response live = Http.get(base + "/health/live");
        Http.Response ready = Http.get(base + "/health/ready");

        assertThat(live.status()).as(live.toString()).isEqualTo(200);
        assertThat(live.contentType()).isEqualTo("application/json");
        assertThat(live.json().get("status").asText()).isEqualTo("up");
        assertThat(ready.status()).as(ready.toString()).isEqualTo(503);
        assertThat(ready.json().get("status").asText()).isEqualTo("not-ready");
        assertThat(ready.json().get("reason").asText()).isEqualTo("Kafka Streams is CREATED, not RUNNING");
    }

    @Test
    void shouldServeTheInstanceWideMetricsInPrometheusTextFormat() {
        Http.Response metrics = Http.get(base + "/metrics");

        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.contentType()).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
        assertThat(metrics.body()).contains("# TYPE snowstamp_dead_letters_total counter")
                .as("partition meters appear with the first task").doesNotContain("snowstamp_ids_issued_total");
        var samples = PrometheusText.parse(metrics.body());
        assertThat(PrometheusText.sum(samples, "snowstamp_dead_letters_total")).isZero();
        assertThat(PrometheusText.sum(samples, "snowstamp_tasks_started_total")).isZero();
        assertThat(PrometheusText.sum(samples, "snowstamp_reservation_waits_total")).isZero();
        assertThat(metrics.body()).contains("# TYPE snowstamp_reservation_wait_seconds_total counter");
        assertThat(PrometheusText.sum(samples, "snowstamp_ready")).isZero();
        assertThat(PrometheusText.sum(samples, "snowstamp_tasks")).isZero();
        assertThat(PrometheusText.sum(samples, "snowstamp_schema_registry_waiting")).isZero();
        assertThat(metrics.body()).contains("# TYPE snowstamp_schema_registry_failures_total counter");
        assertThat(PrometheusText.sum(samples, "snowstamp_id_layout_end_timestamp_seconds")).as("the alert on the layout's lifetime reads it")
                .isEqualTo(config.ids().layout().maxWallMillis() / 1000.0);
        assertThat(PrometheusText.sum(samples, "snowstamp_id_wait_oldest_seconds")).as("no wait in progress").isZero();
        assertThat(samples).as("every series names its application: the alert rules group by it")
                .allSatisfy(s -> assertThat(s.labels()).containsEntry("application", config.connection().applicationId()));
        assertThat(samples).as("the dashboard's JVM panels read them").extracting(PrometheusText.Sample::name)
                .contains("jvm_memory_used_bytes", "jvm_gc_memory_allocated_bytes_total", "process_cpu_usage");
    }

    @Test
    void shouldAnswerOpenMetricsWhenAsked() throws Exception {
        var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/metrics"))
                .header("Accept", "application/openmetrics-text; version=1.0.0").build();
        var response = java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString());

        assertThat(response.headers().firstValue("Content-Type")).contains("application/openmetrics-text; version=1.0.0; charset=utf-8");
        String application = "application=\"" + config.connection().applicationId() + "\"";
        assertThat(response.body()).contains("snowstamp_dead_letters_total{" + application + ",reason=\"not-json\"} 0",
                "snowstamp_lease_waits_total{" + application + "} 0").endsWith("# EOF\n");
    }

    @Test
    void shouldShowTheStateOfThisInstanceWithANoteBeforeKafkaStreamsRuns() {
        Http.Response state = Http.get(base + "/state");

        assertThat(state.status()).as(state.toString()).isEqualTo(200);
        JsonNode json = state.json();
        assertThat(json.get("application").asText()).isEqualTo("snowstamp");
        assertThat(json.get("instance").asText()).isEqualTo("unit-1");
        assertThat(json.get("server").asText()).isEqualTo("127.0.0.1:" + server.getPort());
        assertThat(json.get("streamsState").asText()).isEqualTo("CREATED");
        assertThat(json.get("partitions")).isEmpty();
        assertThat(json.get("notes").get(0).asText()).contains("has not started");
        assertThat(Http.get(base + "/state?local=true").json().has("notes")).as("local answers carry no notes about others").isFalse();
    }

    @Test
    void shouldNeverShowConfigurationSecrets() {
        for (String path : new String[] {"/health/live", "/health/ready", "/metrics", "/state", "/config"}) {
            assertThat(Http.get(base + path).body()).as(path).doesNotContain("secret-jaas-value");
        }
    }

    @Test
    void shouldAnswer404WithTheEndpointsAnd405ForOtherMethods() {
        Http.Response unknown = Http.get(base + "/nope");
        Http.Response post = Http.send(base + "/health/live", "POST");
        Http.Response head = Http.send(base + "/health/ready", "HEAD");

        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.json().get("endpoints")).hasSize(4);
        assertThat(post.status()).isEqualTo(405);
        assertThat(head.status()).isEqualTo(503);
        assertThat(head.body()).isEmpty();
    }

    @Test
    void shouldServeOnNamedDaemonThreads() {
        Http.get(base + "/health/live");

        assertThat(Thread.getAllStackTraces().keySet()).filteredOn(t -> t.getName().startsWith("snowstamp-admin-"))
                .isNotEmpty().allMatch(Thread::isDaemon);
        assertThat(Thread.getAllStackTraces().keySet()).filteredOn(t -> t.getName().equals("HTTP-Dispatcher"))
                .as("the JDK's dispatcher thread must not keep the JVM alive").allMatch(Thread::isDaemon);
    }

    @Test
    void shouldStopListeningOnClose() throws Exception {
        int port = server.getPort();
        server.close();

        assertThatThrownBy(() -> {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            }
        }).isInstanceOf(java.io.IOException.class);
    }

    @Test
    void shouldFailWithTheKeysWhenThePortIsTaken() {
        SnowstampConfig taken = ConfigLoader.load(null, Map.of(), Map.of("instance.id", "unit-2",
                "admin.port", Integer.toString(server.getPort())));

        assertThatThrownBy(() -> AdminServer.start(taken, new StreamsRunner(taken, System::currentTimeMillis), System::currentTimeMillis))
                .hasMessageContaining("cannot start the admin server: port " + server.getPort() + " on 127.0.0.1 is in use")
                .hasMessageContaining("admin.port");
    }
}
