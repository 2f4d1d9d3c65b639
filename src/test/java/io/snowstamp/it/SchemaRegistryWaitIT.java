package io.snowstamp.it;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.snowstamp.admin.AdminServer;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.PrometheusText;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A schema registry that does not answer, seen from outside (schema-registry.md): the start is only a
 * warning, and while a task waits for the registry {@code /health/ready} answers 503 with the reason and
 * {@code /metrics} shows {@code snowstamp_schema_registry_waiting 1}; both clear once it answers. The
 * registry is a JDK HTTP stub (its outage and its answers are what matter here, a real registry is
 * {@code SchemaStampIT}'s); the broker is the shared real one.
 */
@Tag("integration")
@Timeout(240)
class SchemaRegistryWaitIT extends OnSharedBroker {
    private static final String SCHEMA = "{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"}]}";
    @TempDir
    Path work;

    @Test
    void shouldStartWithoutTheRegistryThenAnswerNotReadyAndShowTheWaitInMetricsUntilItAnswers() throws Exception {
        AtomicBoolean answers = new AtomicBoolean(false);
        HttpServer registry = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        registry.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            if (!answers.get()) {
                answer(exchange, 503, "{\"error_code\":50301,\"message\":\"down for the test\"}");
            } else {
                answerAsRegistry(exchange);
            }
            exchange.close();
        });
        registry.start();
        String in = TestBroker.unique("raw");
        String out = TestBroker.unique("stamped");
        String dlq = TestBroker.unique("dlq");
        broker.createTopic(in, 1);
        broker.createTopic(out, 1);
        broker.createTopic(dlq, 1);
        Map<String, String> settings = new TreeMap<>(Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "application.id", TestBroker.unique("registry-wait"), "input.topic", in, "output.topic", out, "dlq.topic", dlq,
                "state.dir", work.resolve("state").toString(), "instance.id", "wait-1", "admin.port", "0",
                "stamp.value-format", "avro", "schema-registry.url", "http://127.0.0.1:" + registry.getAddress().getPort()));
        settings.put("id.worker-registry", "off");     // the worker registry is not what this test is about (one broker for all tests)
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), settings);
        try (StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
             AdminServer admin = AdminServer.start(config, runner, System::currentTimeMillis)) {
            runner.advertise(admin.advertisedAddress());
            String base = "http://127.0.0.1:" + admin.getPort();
            runner.start();     // the registry answers 503 at start: a WARN, not a stop
            assertThat(runner.awaitRunning(Duration.ofSeconds(90))).as("started without the registry").isTrue();
            Http.await(base + "/health/ready", r -> r.status() == 200, 120);
            assertThat(waiting(base)).as("nothing waits before a value arrives").isZero();

            try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                producer.send(new ProducerRecord<>(in, 0, "k".getBytes(StandardCharsets.UTF_8), avroValue(1, 21))).get();
            }
            Http.Response notReady = Http.await(base + "/health/ready", r -> r.status() == 503, 120);
            assertThat(notReady.json().get("reason").asText()).startsWith("waiting for the schema registry since ");
            assertThat(waiting(base)).as("snowstamp_schema_registry_waiting during the wait").isEqualTo(1.0);
            assertThat(Http.get(base + "/health/live").status()).as("live stays up").isEqualTo(200);
            assertThat(broker.consume(out, 1, Duration.ofSeconds(2))).as("nothing stamped on a guess").isEmpty();

            answers.set(true);
            Http.await(base + "/health/ready", r -> r.status() == 200, 120);
            assertThat(waiting(base)).as("the wait is over").isZero();
            assertThat(broker.consume(out, 1, Duration.ofSeconds(60))).as("the waiting value stamped").hasSize(1);
        } finally {
            registry.stop(0);
        }
    }

    private static double waiting(String base) {
        Http.Response metrics = Http.get(base + "/metrics");
        assertThat(metrics.status()).isEqualTo(200);
        return PrometheusText.sum(PrometheusText.parse(metrics.body()), "snowstamp_schema_registry_waiting");
    }

    /** Confluent wire format: magic byte 0, the schema ID (4 bytes), the Avro binary of {@code {"n": n}} (zig-zag varint). */
    private static byte[] avroValue(int schemaId, long n) {
        long zigzag = (n << 1) ^ (n >> 63);
        java.io.ByteArrayOutputStream value = new java.io.ByteArrayOutputStream();
        value.write(0);
        value.writeBytes(java.nio.ByteBuffer.allocate(4).putInt(schemaId).array());
        while ((zigzag & ~0x7FL) != 0) {
            value.write((int) ((zigzag & 0x7F) | 0x80));
            zigzag >>>= 7;
        }
        value.write((int) zigzag);
        return value.toByteArray();
    }

    /** Just enough of the registry's API: the input schema 1, no output subject yet, any registration gets ID 2. */
    private static void answerAsRegistry(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getRawPath();
        if (exchange.getRequestMethod().equals("POST")) {
            answer(exchange, 200, "{\"id\":2}");
        } else if (path.equals("/schemas/ids/1")) {
            answer(exchange, 200, new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode().put("schema", SCHEMA).toString());
        } else if (path.equals("/subjects")) {
            answer(exchange, 200, "[]");
        } else {
            answer(exchange, 404, "{\"error_code\":40401,\"message\":\"Subject not found\"}");
        }
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/vnd.schemaregistry.v1+json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }
}
