package io.snowstamp.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ApicurioRegistry;
import io.snowstamp.testing.AvroOrders;
import io.snowstamp.testing.DocumentedAvroConsumer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Postgres;
import io.snowstamp.testing.SharedPostgres;
import io.snowstamp.testing.TestBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Avro recipe of {@code consuming.md} ({@link DocumentedAvroConsumer}) against a real PostgreSQL and
 * Apicurio's registry: Avro orders of three schema versions stamped on the shared broker, copied into the
 * table by the documented consumer; one row per stamped record, its ID the record's header's, its fields
 * the order's.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: a PostgreSQL server, like the other consuming.md recipes (development.md)
@Timeout(300)
@ExtendWith(SharedPostgres.class)
class AvroPostgresIT extends OnSharedBroker {
    @TempDir
    Path work;

    @Test
    void shouldCopyStampedAvroValuesIntoPostgresWithTheDocumentedConsumer(Postgres postgres) throws Exception {
        String in = TestBroker.unique("avro-pg-in");
        String out = TestBroker.unique("avro-pg-out");
        String dlq = TestBroker.unique("avro-pg-dlq");
        broker.createTopic(in, 2);
        broker.createTopic(out, 2);
        broker.createTopic(dlq, 1);
        String url = postgres.url(postgres.createSchema("avro"));
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement()) {
            statement.execute(DocumentedAvroConsumer.TABLE);
        }
        int count = 300;
        try (ApicurioRegistry registry = ApicurioRegistry.start()) {
            int[] ids = new int[AvroOrders.VERSIONS.length];
            for (int v = 0; v < ids.length; v++) {
                ids[v] = AvroOrders.register(registry, in + "-value", AvroOrders.VERSIONS[v]);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                for (int n = 0; n < count; n++) {
                    producer.send(new ProducerRecord<>(in, String.valueOf(n).getBytes(StandardCharsets.UTF_8),
                            AvroOrders.value(ids[n / 100], AvroOrders.VERSIONS[n / 100], n)));
                }
            }
            Map<String, String> settings = new HashMap<>(Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                    "state.dir", work.resolve("state").toString(), "instance.id", "avro-pg",
                    "application.id", TestBroker.unique("avro-pg-app"), "input.topic", in, "output.topic", out, "dlq.topic", dlq,
                    "id.worker-registry", "off", "stamp.value-format", "avro", "schema-registry.url", registry.url().toString()));
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread copy = new Thread(() -> {
                try {
                    DocumentedAvroConsumer.copy(broker.bootstrapServers(), TestBroker.unique("avro-pg-db"), out,
                            registry.url().toString(), url, running::get);
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "avro-pg-copy");
            try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
                runner.start();
                copy.start();
                long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
                while (rows(url) < count && failed.get() == null && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                }
            } finally {
                running.set(false);
                copy.join(30_000);
            }
            assertThat(failed.get()).isNull();
        }

        List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(out, count, Duration.ofSeconds(30));
        assertThat(stamped).hasSize(count);
        Map<Long, String> expected = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : stamped) {
            int n = Integer.parseInt(new String(record.key(), StandardCharsets.UTF_8));
            expected.put(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value()),
                    "customer " + n + "|" + (n < 100 ? "null" : String.valueOf(n)));
        }
        Map<Long, String> table = new HashMap<>();
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement();
             ResultSet rows = statement.executeQuery("SELECT id, customer, quantity FROM orders")) {
            while (rows.next()) {
                table.put(rows.getLong(1), rows.getString(2) + "|" + rows.getString(3));
            }
        }
        assertThat(table).as("one row per stamped record: its ID, its order").isEqualTo(expected);
    }

    private static int rows(String url) throws Exception {
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement();
             ResultSet rows = statement.executeQuery("SELECT count(*) FROM orders")) {
            rows.next();
            return rows.getInt(1);
        }
    }
}
