package io.snowstamp.testing;

import com.fasterxml.jackson.databind.JsonNode;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A private Prometheus server (Debian's {@code prometheus} package, {@link PrometheusTools}) started as a child process on
 * a free loopback port, with a configuration file and a data directory of its own under {@code dir}; its log goes to
 * {@code target/fault-logs/prometheus-PORT/}. {@link #close()} stops it. Skips the calling test where Prometheus is not
 * installed (fails under CI).
 */
public final class PrometheusServer implements AutoCloseable {
    private final ChildJvm process;
    private final String url;

    private PrometheusServer(ChildJvm process, String url) {
        this.process = process;
        this.url = url;
    }

    /**
     * Starts a server that scrapes {@code targets} (host:port, {@code /metrics}) every second as job {@code job}, adding
     * {@code labels} to their series (as Kubernetes service discovery adds {@code namespace}), and evaluates
     * {@code ruleFiles} every second; returns once it answers ready.
     */
    public static PrometheusServer start(Path dir, String job, List<String> targets, Map<String, String> labels,
                                         List<Path> ruleFiles) throws Exception {
        Path binary = PrometheusTools.require("prometheus");
        Files.createDirectories(dir);
        Path config = dir.resolve("prometheus.yml");
        StringBuilder yaml = new StringBuilder("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n");
        ruleFiles.forEach(file -> yaml.append("  - ").append(quoted(file.toAbsolutePath().toString())).append('\n'));
        yaml.append("scrape_configs:\n  - job_name: ").append(quoted(job)).append("\n    static_configs:\n      - targets: [");
        yaml.append(String.join(", ", targets.stream().map(PrometheusServer::quoted).toList())).append("]\n");
        if (!labels.isEmpty()) {
            yaml.append("        labels:\n");
            labels.forEach((name, value) -> yaml.append("          ").append(name).append(": ").append(quoted(value)).append('\n'));
        }
        Files.writeString(config, yaml);
        int port = FreePort.pick();
        ChildJvm process = ChildJvm.startCommand(Stamper.LOGS.resolve("prometheus-" + port), "prometheus", dir, Map.of(),
                List.of(binary.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
                        "--web.listen-address=127.0.0.1:" + port, "--log.level=warn"));
        PrometheusServer server = new PrometheusServer(process, "http://127.0.0.1:" + port);
        try {
            Http.await(server.url + "/-/ready", r -> r.status() == 200, 60);
        } catch (AssertionError e) {
            server.close();
            throw new AssertionError(e.getMessage() + "\nprometheus: " + process.logs(), e);
        }
        return server;
    }

    private static String quoted(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    /** The series an instant query returns now ({@code data.result}); fails on a query Prometheus refuses. */
    public JsonNode query(String promql) {
        JsonNode answer = api("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        return answer.get("data").get("result");
    }

    /** {@code /api/v1/alerts}: the pending and firing alerts ({@code data.alerts}). */
    public JsonNode alerts() {
        return api("/api/v1/alerts").get("data").get("alerts");
    }

    /** {@code /api/v1/rules}: the rule groups with each rule's health and last error ({@code data.groups}). */
    public JsonNode ruleGroups() {
        return api("/api/v1/rules").get("data").get("groups");
    }

    private JsonNode api(String path) {
        Http.Response response = Http.get(url + path);
        if (response.status() != 200 || !"success".equals(response.json().path("status").asText())) {
            throw new AssertionError("GET " + path + ": " + response);
        }
        return response.json();
    }

    public String logs() throws Exception {
        return process.logs();
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
