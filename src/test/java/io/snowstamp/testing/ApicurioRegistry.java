package io.snowstamp.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real schema registry: Apicurio Registry's server (the build unpacks it from Maven Central into
 * {@code target/apicurio}, {@code pre-integration-test}) as a child JVM with in-memory storage, its HTTP
 * and management ports on 127.0.0.1 only (the management port binds to every address otherwise).
 * {@link #url()} is its Confluent-compatible API. Logs in {@code target/fault-logs/apicurio-PORT/}.
 */
public final class ApicurioRegistry implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private ChildJvm process;
    private final int port;

    private ApicurioRegistry(ChildJvm process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts a registry and waits (bounded) until its API answers. */
    public static ApicurioRegistry start() throws Exception {
        int port = FreePort.pick();
        ApicurioRegistry registry = new ApicurioRegistry(launch(port), port);
        try {
            registry.awaitReady(Duration.ofSeconds(120));
        } catch (Exception | AssertionError e) {
            registry.close();
            throw e;
        }
        return registry;
    }

    /**
     * SIGKILL, then a new registry on the same port: empty (in-memory storage), so it numbers the schemas registered
     * next from the start again, and IDs a client kept name nothing, or other schemas.
     */
    public void restartEmpty() throws Exception {
        process.kill();
        process.close();
        process = launch(port);
        awaitReady(Duration.ofSeconds(120));
    }

    private static ChildJvm launch(int port) throws Exception {
        Path jar = Path.of(System.getProperty("snowstamp.apicurio.jar", "target/apicurio/apicurio-registry-app-3.0.9-runner.jar"));
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " does not exist: run the test through 'mvn verify' (pre-integration-test unpacks it)");
        }
        List<String> command = new ArrayList<>(List.of(ChildJvm.java(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.host=127.0.0.1", "-Dquarkus.management.port=" + FreePort.pick(),
                "-Dquarkus.log.level=WARN", "-jar", jar.toAbsolutePath().toString()));
        Path logs = Path.of("target", "fault-logs", "apicurio-" + port + "-" + System.currentTimeMillis());
        return ChildJvm.startCommand(logs, "registry", logs, java.util.Map.of(), command);
    }

    /** The Confluent-compatible API: {@code http://127.0.0.1:PORT/apis/ccompat/v7}. */
    public URI url() {
        return URI.create("http://127.0.0.1:" + port + "/apis/ccompat/v7");
    }

    /** Apicurio's own API, version 2 (what its 2.x serdes and Kafka Connect converter call): {@code http://127.0.0.1:PORT/apis/registry/v2}. */
    public URI apiV2() {
        return URI.create("http://127.0.0.1:" + port + "/apis/registry/v2");
    }

    /** {@code GET|PUT|POST url()+path} with a JSON body (null: none); the answer's status and body. */
    public HttpResponse<String> call(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/vnd.schemaregistry.v1+json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void awaitReady(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError("the schema registry exited: " + process.logs());
            }
            try {
                if (call("GET", "/subjects", null).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the schema registry did not answer within " + limit + ": " + process.logs());
    }

    /** SIGKILL: the registry is gone (its in-memory schemas with it) until a new one starts. */
    public void kill() throws InterruptedException {
        process.kill();
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
