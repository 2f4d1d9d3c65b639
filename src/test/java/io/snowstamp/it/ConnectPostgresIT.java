package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ApicurioRegistry;
import io.snowstamp.testing.AvroOrders;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.ConnectWorker;
import io.snowstamp.testing.DocumentedConsumer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Postgres;
import io.snowstamp.testing.SharedPostgres;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TableCopy;
import io.snowstamp.testing.TableCopy.Row;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.Verification;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

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
import java.util.Properties;
import java.util.function.LongFunction;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kafka Connect recipes of {@code consuming.md}, run as written: Apache Kafka's own Connect worker
 * (standalone, {@code connect-runtime} 4.3.1) with Debezium's JDBC sink from its plugin archive, the
 * connector files of the page ({@code src/test/resources/connect/}, which {@code ConsumingDocsTest}
 * keeps equal to the page) with only the name, the topic and the database connection replaced (the table
 * named with the test's schema: tests share one PostgreSQL server), into a real
 * PostgreSQL. Three input formats, each stamped by its own stamper: schemaless JSON into a {@code jsonb}
 * column, JSON with an embedded schema into a column per field, and Avro values on a schema registry
 * through Apicurio's converter into a column per field. Each output topic starts with an aborted
 * transaction holding a record that looks stamped (what a crashed stamper leaves): {@code read_committed}
 * (rule 1) must keep it out of the table.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: a PostgreSQL server and a Kafka Connect worker (development.md)
@Timeout(300)
@ExtendWith(SharedPostgres.class)
class ConnectPostgresIT extends OnSharedBroker {
    private static final int EVENTS = 1_000;
    /** The ID the aborted records carry: no stamper issues it (it decodes to the epoch itself). */
    private static final long ABORTED_ID = 1;
    /** Avro orders stamped per schema version. */
    private static final int AVRO_PER_VERSION = 100;

    @TempDir
    Path work;

    @Test
    void shouldCopyStampedJsonIntoPostgresThroughDebeziumsJdbcSink(Postgres postgres) throws Exception {
        Timeline timeline = new Timeline("connect-pg");
        String schema = postgres.createSchema("connect");
        String url = postgres.url(schema);
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement()) {
            statement.execute(DocumentedConsumer.TABLE);
            statement.execute(ConnectWorker.resource("/connect/orders.sql"));
        }
        Stamper.Topics events = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper.Topics orders = Stamper.Topics.create(broker.bootstrapServers(), 4);
        // first in partition 0, so that a sink that has read the stamped records has read past it
        abortOneStampedLookingRecord(events.out(), "{\"n\":-2,\"kind\":\"aborted\"}".getBytes(StandardCharsets.UTF_8));
        abortOneStampedLookingRecord(orders.out(), ("{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"n\",\"type\":\"int64\"},"
                + "{\"field\":\"kind\",\"type\":\"string\"}]},\"payload\":{\"n\":-2,\"kind\":\"aborted\"}}").getBytes(StandardCharsets.UTF_8));
        Stamper eventsStamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), events, "events");
        Stamper ordersStamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), orders, "orders");

        try (ChildJvm first = eventsStamper.launch(); ChildJvm second = ordersStamper.launch()) {
            first.awaitOutput(Stamper.STARTED + events.in(), 180);
            second.awaitOutput(Stamper.STARTED + orders.in(), 180);
            produce(events.in(), n -> "{\"n\":" + n + ",\"kind\":\"event\",\"tags\":[\"a\",\"b\"]}");
            produce(orders.in(), n -> "{\"schema\":{\"type\":\"struct\",\"name\":\"order\",\"optional\":false,\"fields\":["
                    + "{\"field\":\"n\",\"type\":\"int64\",\"optional\":false},{\"field\":\"kind\",\"type\":\"string\",\"optional\":false}]},"
                    + "\"payload\":{\"n\":" + n + ",\"kind\":\"order\"}}");
            for (Stamper.Topics topics : List.of(events, orders)) {
                Verification verify = Verification.awaitAllStamped(broker.bootstrapServers(), topics.out(), topics.in(), EVENTS,
                        Duration.ofSeconds(90));
                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(EVENTS));
            }
            assertThat(first.terminate(60)).as(first.logs()).isIn(0, 143);
            assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
        }
        timeline.mark("stamped %d events in each format, after an aborted transaction in each output topic", EVENTS);

        List<Properties> connectors = List.of(
                recipe("/connect/events-to-postgres.properties", events.out(), url, schema),
                recipe("/connect/orders-to-postgres.properties", orders.out(), url, schema));
        // what does not work: schemaless JSON through JsonConverter becomes a map, which HeaderToValue refuses
        Properties asMap = recipe("/connect/events-to-postgres.properties", events.out(), url, schema);
        asMap.putAll(Map.of("name", TestBroker.unique("events-as-map"), "value.converter", "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable", "false", "transforms", "id", "collection.name.format", schema + ".events_as_map"));
        try (ConnectWorker worker = ConnectWorker.start(work.resolve("connect"), TestBroker.unique("connect"),
                broker.bootstrapServers(), List.of(connectors.get(0), connectors.get(1), asMap))) {
            for (Properties connector : connectors) {
                awaitConsumedToTheEnd(connector, worker);
            }
            assertThat(TableCopy.count(url, "events")).as(worker.errors()).isEqualTo(EVENTS);
            assertThat(TableCopy.count(url, "orders")).as(worker.errors()).isEqualTo(EVENTS);
            timeline.mark("the sink wrote %d rows to each table", EVENTS);

            assertThat(TableCopy.rows(url, TableCopy.EVENTS)).as("schemaless JSON: a row per committed output record, payload as jsonb")
                    .containsExactlyInAnyOrderElementsOf(committed(events.out()));
            assertThat(TableCopy.rows(url, "SELECT id, source, n FROM orders ORDER BY id"))
                    .as("JSON with a schema: a row per committed output record, a column per field")
                    .containsExactlyInAnyOrderElementsOf(committed(orders.out()));
            assertThat(TableCopy.rows(url, "SELECT id, source, -1 FROM events WHERE payload->>'tags' IS NULL"))
                    .as("the jsonb payload keeps the event's whole value").isEmpty();
            worker.awaitLog("Only Struct objects supported for [Header field insertion], found: java.util.HashMap");
        }
    }

    /**
     * The Avro recipe: orders of three schema versions ({@link AvroOrders}) stamped with
     * {@code stamp.value-format=avro} against a real registry (Apicurio's server), copied by the page's
     * connector file through Apicurio's {@code AvroConverter} (a Connect plugin of its own): one row per
     * committed output record, the ID a column taken from the value (no header transform), equal to the
     * record's ID header. The converter decodes with Apicurio's own deserializer and the schema the
     * registry serves for the value's output schema ID, so this is also the check that a reader other than
     * Apache Avro's accepts the stamped bytes under the output schema.
     */
    @Test
    void shouldCopyStampedAvroIntoPostgresThroughApicuriosConverter(Postgres postgres) throws Exception {
        Timeline timeline = new Timeline("connect-avro-pg");
        String schema = postgres.createSchema("connect_avro");
        String url = postgres.url(schema);
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement()) {
            statement.execute(ConnectWorker.resource("/connect/avro-orders.sql"));
        }
        String in = TestBroker.unique("connect-avro-in");
        String out = TestBroker.unique("connect-avro-out");
        broker.createTopic(in, 2);
        broker.createTopic(out, 2);
        String dlq = TestBroker.unique("connect-avro-dlq");
        broker.createTopic(dlq, 1);
        int count = 3 * AVRO_PER_VERSION;
        try (ApicurioRegistry registry = ApicurioRegistry.start()) {
            int[] ids = new int[AvroOrders.VERSIONS.length];
            for (int v = 0; v < ids.length; v++) {
                ids[v] = AvroOrders.register(registry, in + "-value", AvroOrders.VERSIONS[v]);
            }
            abortOneStampedLookingRecord(out, abortedOrder(registry));
            try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                for (int n = 0; n < count; n++) {
                    producer.send(new ProducerRecord<>(in, String.valueOf(n).getBytes(StandardCharsets.UTF_8),
                            AvroOrders.value(ids[n / AVRO_PER_VERSION], AvroOrders.VERSIONS[n / AVRO_PER_VERSION], n)));
                }
            }
            Map<String, String> settings = Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                    "state.dir", work.resolve("state").toString(), "instance.id", "connect-avro",
                    "application.id", TestBroker.unique("connect-avro-app"), "input.topic", in, "output.topic", out,
                    "dlq.topic", dlq, "id.worker-registry", "off",
                    "stamp.value-format", "avro", "schema-registry.url", registry.url().toString());
            List<ConsumerRecord<byte[], byte[]>> stamped;
            try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
                runner.start();
                stamped = broker.consume(out, count, Duration.ofSeconds(120));
            }
            assertThat(stamped).as("stamped within 120 s").hasSize(count);
            timeline.mark("stamped %d Avro orders of three schema versions, after an aborted transaction", count);

            Properties connector = recipe("/connect/avro-orders-to-postgres.properties", out, url, schema);
            connector.setProperty("value.converter.apicurio.registry.url", registry.apiV2().toString());
            // Apicurio's 2.6 converter jar has no ServiceLoader manifest: the worker's default discovery scans for it
            try (ConnectWorker worker = ConnectWorker.start(work.resolve("connect"), TestBroker.unique("connect-avro"),
                    broker.bootstrapServers(), List.of(connector), Map.of("plugin.discovery", "hybrid_warn"))) {
                awaitConsumedToTheEnd(connector, worker);
                assertThat(avroOrders(url)).as("one row per committed output record: the value's ID, its fields; the worker's errors:\n%s",
                        worker.errors()).isEqualTo(expectedOrders(stamped));
            }
            timeline.mark("the sink wrote %d rows", count);
        }
    }

    /** An order that looks stamped (an {@code id} field under a registered schema), for the aborted transaction. */
    private static byte[] abortedOrder(ApicurioRegistry registry) throws Exception {
        String schemaText = AvroOrders.VERSIONS[0].replace("}]}", "},{\"name\":\"id\",\"type\":\"long\",\"default\":0}]}");
        int schemaId = AvroOrders.register(registry, TestBroker.unique("aborted") + "-value", schemaText);
        org.apache.avro.Schema schema = new org.apache.avro.Schema.Parser().parse(schemaText);
        GenericRecord order = new GenericData.Record(schema);
        order.put("customer", "aborted");
        order.put("id", ABORTED_ID);
        return AvroOrders.framed(schemaId, order);
    }

    /** By the ID header of each stamped record: the row its order makes ({@link AvroOrders#value}: quantity from v2, note from v3). */
    private static Map<Long, String> expectedOrders(List<ConsumerRecord<byte[], byte[]>> stamped) {
        Map<Long, String> expected = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : stamped) {
            int n = Integer.parseInt(new String(record.key(), StandardCharsets.UTF_8));
            int version = n / AVRO_PER_VERSION;
            expected.put(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value()), "customer " + n
                    + "|" + (version >= 1 ? String.valueOf(n) : "null") + "|" + (version >= 2 && n % 2 == 1 ? "note " + n : "null"));
        }
        return expected;
    }

    private static Map<Long, String> avroOrders(String url) throws Exception {
        Map<Long, String> rows = new HashMap<>();
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement();
             ResultSet result = statement.executeQuery("SELECT id, customer, quantity, note FROM avro_orders")) {
            while (result.next()) {
                rows.put(result.getLong(1), result.getString(2) + "|" + result.getString(3) + "|" + result.getString(4));
            }
        }
        return rows;
    }

    /**
     * The page's connector file with only the topic and the database connection replaced, and the table named
     * with the test's schema: the sink looks a table without one up in every schema of the database, and other
     * tests' schemas on the shared server hold tables of the same names (another {@code orders}).
     */
    private static Properties recipe(String resource, String topic, String url, String schema) throws Exception {
        Properties connector = ConnectWorker.connector(resource);
        connector.putAll(Map.of("name", TestBroker.unique(connector.getProperty("name")), "topics", topic,
                "connection.url", url, "connection.username", Postgres.USER,
                "collection.name.format", schema + "." + connector.getProperty("collection.name.format")));
        connector.remove("connection.password");
        return connector;
    }

    private static List<Row> committed(String topic) {
        return StampedRecords.read(broker.bootstrapServers(), topic).stream().map(r -> new Row(r.id(), r.source(), r.n())).toList();
    }

    /**
     * Waits until the connector's consumer group has committed, in every partition of its topic, the
     * offset after the last committed record: it has read everything and written it (a sink task commits
     * the offsets of what it has flushed to the database), the aborted record before it included.
     */
    private static void awaitConsumedToTheEnd(Properties connector, ConnectWorker worker) throws Exception {
        String topic = connector.getProperty("topics");
        String group = "connect-" + connector.getProperty("name");
        Map<Integer, Long> end = StampedRecords.read(broker.bootstrapServers(), topic).stream()
                .collect(Collectors.toMap(StampedRecords.Stamped::partition, r -> r.offset() + 1, Math::max));
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        Map<Integer, Long> committed = TestBroker.committedOffsets(broker.bootstrapServers(), group, topic);
        while (!committed.equals(end) && System.nanoTime() < deadline) {
            Thread.sleep(250);
            committed = TestBroker.committedOffsets(broker.bootstrapServers(), group, topic);
        }
        assertThat(committed).as("%s: offsets committed within 120 s; the worker's errors:\n%s", group, worker.errors())
                .isEqualTo(end);
    }

    private static void produce(String topic, LongFunction<String> value) {
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            for (long n = 0; n < EVENTS; n++) {
                producer.send(new ProducerRecord<>(topic, ("user-" + n % 100).getBytes(StandardCharsets.UTF_8),
                        value.apply(n).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    /** What a stamper's aborted transaction leaves: a record with ID and source headers that no read_committed reader sees. */
    private static void abortOneStampedLookingRecord(String topic, byte[] value) {
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TestBroker.unique("aborter")))) {
            producer.initTransactions();
            producer.beginTransaction();
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, null, value);
            record.headers().add("snowstamp-id", Long.toString(ABORTED_ID).getBytes(StandardCharsets.US_ASCII));
            record.headers().add("snowstamp-src", "aborted/0/0".getBytes(StandardCharsets.UTF_8));
            producer.send(record);
            producer.flush();
            producer.abortTransaction();
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(Map<String, String> extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }
}
