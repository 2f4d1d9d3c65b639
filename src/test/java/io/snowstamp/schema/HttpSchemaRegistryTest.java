package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.snowstamp.config.ConfigException;
import io.snowstamp.config.SchemaRegistrySettings;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How the client reads each kind of answer, against a loopback HTTP server that answers as told
 * (a real registry: {@code SchemaRegistryIT}).
 */
class HttpSchemaRegistryTest {
    private final List<HttpServer> servers = new CopyOnWriteArrayList<>();
    private final List<String> requests = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        servers.forEach(server -> server.stop(0));
    }

    @Test
    void shouldReadASchemaAndRegisterOneWithItsReferences() {
        URI url = server(exchange -> {
            if (exchange.getRequestMethod().equals("GET")) {
                return answer(exchange, 200, "{\"schema\":\"syntax = \\\"proto3\\\";\",\"schemaType\":\"PROTOBUF\","
                        + "\"references\":[{\"name\":\"t.proto\",\"subject\":\"t\",\"version\":2}]}");
            }
            return answer(exchange, 200, "{\"id\":42}");
        });
        HttpSchemaRegistry registry = client(null, null, url);

        RegisteredSchema schema = registry.schema(7);
        int id = registry.register("com.acme Order/x", schema);

        assertThat(schema).isEqualTo(new RegisteredSchema("PROTOBUF", "syntax = \"proto3\";",
                List.of(new RegisteredSchema.Reference("t.proto", "t", 2))));
        assertThat(id).isEqualTo(42);
        assertThat(requests).containsExactly("GET /api/schemas/ids/7 auth=null",
                "POST /api/subjects/com.acme%20Order%2Fx/versions auth=null {\"schema\":\"syntax = \\\"proto3\\\";\",\"schemaType\":\"PROTOBUF\","
                        + "\"references\":[{\"name\":\"t.proto\",\"subject\":\"t\",\"version\":2}]}");
    }

    @Test
    void shouldTakeAnAnswerWithoutSchemaTypeForAvroAndSendBasicAuth() {
        URI url = server(exchange -> answer(exchange, 200, "{\"schema\":\"\\\"string\\\"\"}"));
        RegisteredSchema schema = client("alice", "s3cret", url).schema(1);
        assertThat(schema.type()).isEqualTo("AVRO");
        assertThat(requests).containsExactly("GET /api/schemas/ids/1 auth=Basic YWxpY2U6czNjcmV0");
    }

    @Test
    void shouldTellAnUnknownIdAndARefusedSchemaFromAnOutage() {
        URI url = server(exchange -> exchange.getRequestMethod().equals("GET")
                ? answer(exchange, 404, "{\"error_code\":40403,\"message\":\"Schema not found\"}")
                : answer(exchange, 409, "{\"error_code\":409,\"message\":\"Schema being registered is incompatible\"}"));
        HttpSchemaRegistry registry = client(null, null, url);

        BadRecordException unknown = catchThrowableOfType(BadRecordException.class, () -> registry.schema(5));
        assertThat(unknown.code()).isEqualTo(Code.UNKNOWN_SCHEMA);
        assertThat(unknown.getMessage()).isEqualTo("schema ID 5 is not in the schema registry");
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> registry.register("s", new RegisteredSchema("AVRO", "\"long\"", List.of())));
        assertThat(refused.code()).isEqualTo(Code.OUTPUT_SCHEMA_REFUSED);
        assertThat(refused.getMessage()).isEqualTo("the schema registry refused the output schema under subject s (HTTP 409):"
                + " Schema being registered is incompatible");
    }

    @Test
    void shouldCountServerErrorsRefusedConnectionsAndTimeoutsAsAnOutageAndTryTheNextUrl() throws IOException {
        URI failing = server(exchange -> answer(exchange, 503, "{\"message\":\"down\"}"));
        URI slow = server(exchange -> {
            sleep(4_000);
            return answer(exchange, 200, "{}");
        });
        URI closed = closedPort();
        URI working = server(exchange -> answer(exchange, 200, "{\"schema\":\"\\\"long\\\"\"}"));

        RegistryUnavailableException outage = catchThrowableOfType(RegistryUnavailableException.class,
                () -> client(Duration.ofSeconds(1), null, null, failing, slow, closed).schema(1));
        assertThat(outage.getMessage()).startsWith("the schema registry did not answer: " + failing + "/schemas/ids/1: HTTP 503; "
                + slow + "/schemas/ids/1: timed out").contains(closed + "/schemas/ids/1: connection refused");

        HttpSchemaRegistry registry = client(null, null, failing, working);
        assertThat(registry.schema(1).schema()).isEqualTo("\"long\"");
        requests.clear();
        registry.schema(2);
        assertThat(requests).as("starts with the URL that answered last").hasSize(1);
    }

    /** schema-registry.md: 408 (request timeout) and 429 (too many requests) are an outage like 5xx; 422 refuses the output schema. */
    @Test
    void shouldCount408And429AsAnOutageAnd422AsARefusedOutputSchema() {
        URI timedOut = server(exchange -> answer(exchange, 408, "{\"message\":\"Request Timeout\"}"));
        URI throttled = server(exchange -> answer(exchange, 429, "{\"message\":\"Too Many Requests\"}"));
        for (URI url : List.of(timedOut, throttled)) {
            HttpSchemaRegistry registry = client(null, null, url);
            assertThat(catchThrowable(() -> registry.schema(1))).as("%s", url).isInstanceOf(RegistryUnavailableException.class);
            assertThat(catchThrowable(() -> registry.register("s", new RegisteredSchema("AVRO", "\"long\"", List.of()))))
                    .as("%s", url).isInstanceOf(RegistryUnavailableException.class);
            assertThat(catchThrowable(registry::check)).as("%s: at start a warning, not a stop", url)
                    .isInstanceOf(RegistryUnavailableException.class);
        }
        RegistryUnavailableException both = catchThrowableOfType(RegistryUnavailableException.class,
                () -> client(null, null, timedOut, throttled).schema(1));
        assertThat(both.getMessage()).contains(timedOut + "/schemas/ids/1: HTTP 408", throttled + "/schemas/ids/1: HTTP 429");

        URI unprocessable = server(exchange -> answer(exchange, 422, "{\"error_code\":42201,\"message\":\"Invalid schema\"}"));
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> client(null, null, unprocessable).register("s", new RegisteredSchema("AVRO", "\"long\"", List.of())));
        assertThat(refused.code()).isEqualTo(Code.OUTPUT_SCHEMA_REFUSED);
        assertThat(refused.getMessage()).isEqualTo("the schema registry refused the output schema under subject s (HTTP 422): Invalid schema");
    }

    @Test
    void shouldStopOnRefusedCredentialsOrAUrlThatIsNoRegistry() {
        URI forbidden = server(exchange -> answer(exchange, 401, "{\"message\":\"Unauthorized\"}"));
        assertThatThrownBy(() -> client("alice", "wrong", forbidden).check()).isInstanceOf(ConfigException.class)
                .hasMessage("schema-registry.username=alice: the schema registry at " + forbidden + " refused these credentials (HTTP 401)");
        assertThatThrownBy(() -> client(null, null, forbidden).schema(1)).isInstanceOf(ConfigException.class)
                .hasMessage("schema-registry.url=" + forbidden + ": the schema registry asks for credentials (HTTP 401);"
                        + " set schema-registry.username and schema-registry.password");
        URI notARegistry = server(exchange -> answer(exchange, 404, "<html>Not Found</html>"));
        assertThatThrownBy(() -> client(null, null, notARegistry).schema(1)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("answered HTTP 404 (<html>Not Found</html>): not a Confluent-compatible schema registry API");
        assertThatThrownBy(() -> client(null, null, notARegistry).check()).isInstanceOf(ConfigException.class);
        URI registry = server(exchange -> answer(exchange, 200, "[\"a-value\"]"));
        client(null, null, registry).check();
        assertThat(requests).last().asString().startsWith("GET /api/subjects");
    }

    @Test
    void shouldTrustTheRegistryOfAConfiguredTrustStoreOnly(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // a self-signed certificate for 127.0.0.1, made by the JDK's keytool: the server's key store and the client's trust store
        java.nio.file.Path store = dir.resolve("registry.p12");
        Process keytool = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "registry", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2", "-dname", "CN=127.0.0.1",
                "-ext", "SAN=ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "secret",
                "-keypass", "secret").redirectErrorStream(true).start();
        String keytoolOutput = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(keytool.waitFor()).as(keytoolOutput).isZero();
        java.security.KeyStore keys = java.security.KeyStore.getInstance(store.toFile(), "secret".toCharArray());
        javax.net.ssl.KeyManagerFactory keyManagers = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        keyManagers.init(keys, "secret".toCharArray());
        javax.net.ssl.SSLContext tls = javax.net.ssl.SSLContext.getInstance("TLS");
        tls.init(keyManagers.getKeyManagers(), null, null);
        com.sun.net.httpserver.HttpsServer server = com.sun.net.httpserver.HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(tls));
        server.createContext("/", exchange -> {
            answer(exchange, 200, "{\"schema\":\"\\\"long\\\"\"}");
            exchange.close();
        });
        server.start();
        try {
            URI url = URI.create("https://127.0.0.1:" + server.getAddress().getPort());
            HttpSchemaRegistry trusting = HttpSchemaRegistry.of(new SchemaRegistrySettings(List.of(url), SchemaRegistrySettings.SubjectStrategy.TOPIC,
                    null, null, store, "secret", null, null, Duration.ofSeconds(20), 10));
            assertThat(trusting.schema(1).schema()).isEqualTo("\"long\"");
            assertThatThrownBy(() -> client(null, null, url).check()).as("the JVM's trust store does not know the certificate")
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("schema-registry.url=" + url + ": the TLS handshake failed (")
                    .hasMessageEndingWith("); check schema-registry.truststore and schema-registry.keystore");
            assertThatThrownBy(() -> HttpSchemaRegistry.of(new SchemaRegistrySettings(List.of(url), SchemaRegistrySettings.SubjectStrategy.TOPIC,
                    null, null, store, "wrong", null, null, Duration.ofSeconds(20), 10)))
                    .isInstanceOf(ConfigException.class).hasMessageStartingWith("schema-registry.truststore=" + store + " is invalid");
        } finally {
            server.stop(0);
        }
    }

    private HttpSchemaRegistry client(String user, String password, URI... urls) {
        return client(Duration.ofSeconds(20), user, password, urls);
    }

    private HttpSchemaRegistry client(Duration timeout, String user, String password, URI... urls) {
        return HttpSchemaRegistry.of(new SchemaRegistrySettings(List.of(urls), SchemaRegistrySettings.SubjectStrategy.TOPIC, user, password,
                null, null, null, null, timeout, 10));
    }

    private interface Handler {
        int handle(HttpExchange exchange) throws IOException;
    }

    private URI server(Handler handler) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", exchange -> {
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath() + " auth="
                        + exchange.getRequestHeaders().getFirst("Authorization") + (body.isEmpty() ? "" : " " + body));
                handler.handle(exchange);
                exchange.close();
            });
            server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
            server.start();
            servers.add(server);
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/api");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static int answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        return status;
    }

    private static URI closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
