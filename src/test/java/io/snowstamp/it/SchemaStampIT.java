package io.snowstamp.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.sun.net.httpserver.HttpServer;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ApicurioRegistry;
import io.snowstamp.testing.AvroOrders;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OneLine;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.PrometheusText;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Avro values framed for a schema registry through the stamper, on the real broker against a real
 * registry (Apicurio's server): the input schema evolves through three versions and the output subject
 * (BACKWARD) with it; every stamped value is read by Apache Avro's reader with the schema the registry
 * serves for the value's output ID, and its {@code id} field is the ID of its header; bad values go to
 * the dead-letter topic with their reason; a registry outage holds a new schema's values back, loses
 * nothing and dead-letters nothing, while values of known schemas keep being stamped. Protobuf values
 * too, read by protobuf-java's {@code DynamicMessage}; refused credentials stop the start.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(600)
@Order(10)   // among the longest (four stampers, one through 35 s of outage): starts early in the parallel run (see development.md)
class SchemaStampIT extends OnSharedBroker {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] VERSIONS = AvroOrders.VERSIONS;

    private static ApicurioRegistry registry;
    private static SwitchableProxy proxy;
    @TempDir
    Path work;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = ApicurioRegistry.start();
        proxy = new SwitchableProxy(registry.url());
    }

    @AfterAll
    static void stopRegistry() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    @Test
    void shouldStampThreeSchemaVersionsAndDeadLetterTheBadValues() throws Exception {
        Topics topics = topics("avro");
        String in = topics.in();
        String out = topics.out();
        String dlq = topics.dlq();
        AvroOrders.compatibility(registry, in + "-value", "BACKWARD");
        AvroOrders.compatibility(registry, out + "-value", "BACKWARD");
        int[] ids = new int[VERSIONS.length];
        for (int v = 0; v < VERSIONS.length; v++) {
            ids[v] = AvroOrders.register(registry, in + "-value", VERSIONS[v]);
        }
        int primitive = AvroOrders.register(registry, in + "-prim", "\"string\"");
        int good = 300;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < good; n++) {
                producer.send(new ProducerRecord<>(in, key(n), AvroOrders.value(ids[n / 100], VERSIONS[n / 100], n)));
                if (n % 20 == 0) {
                    producer.send(new ProducerRecord<>(in, key(-1), "{\"customer\":\"json\"}".getBytes(StandardCharsets.UTF_8)));
                    producer.send(new ProducerRecord<>(in, key(-2), new byte[] {0, 0x7F, 0, 0, 9, 2, 'x'}));
                    producer.send(new ProducerRecord<>(in, key(-3), new byte[] {0, 0, 0, 0, (byte) primitive, 2, 'x'}));
                    producer.send(new ProducerRecord<>(in, key(-4), null));      // a tombstone: stamped in the headers
                    byte[] trailing = AvroOrders.value(ids[0], VERSIONS[0], n);
                    producer.send(new ProducerRecord<>(in, key(-5), java.util.Arrays.copyOf(trailing, trailing.length + 1)));
                }
            }
        }

        try (StreamsRunner runner = new StreamsRunner(config(in, out, dlq), System::currentTimeMillis)) {
            runner.start();
            List<ConsumerRecord<byte[], byte[]>> all = broker.consume(out, good + 15, Duration.ofSeconds(180));
            List<ConsumerRecord<byte[], byte[]>> dead = broker.consume(dlq, 60, Duration.ofSeconds(60));

            assertThat(all).hasSize(good + 15);
            List<ConsumerRecord<byte[], byte[]>> tombstones = all.stream().filter(r -> r.value() == null).toList();
            assertThat(tombstones).hasSize(15).allSatisfy(r -> assertThat(r.headers().lastHeader(IdHeader.ID)).isNotNull());
            List<ConsumerRecord<byte[], byte[]>> stamped = all.stream().filter(r -> r.value() != null).toList();
            Map<Integer, Schema> outputs = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : stamped) {
                int outputId = ByteBuffer.wrap(record.value(), 1, 4).getInt();
                Schema schema = outputs.computeIfAbsent(outputId, SchemaStampIT::schemaById);
                GenericRecord read = decodeWhole(schema, record.value());
                int n = Integer.parseInt(new String(record.key(), StandardCharsets.UTF_8));
                assertThat(read.get("id")).isEqualTo(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value()));
                assertThat(read.get("customer").toString()).isEqualTo("customer " + n);
                assertThat(schema.getFields()).hasSize(n / 100 + 2);
            }
            assertThat(outputs).as("one output schema per input version").hasSize(3);
            assertThat(JSON.readTree(registry.call("GET", "/subjects/" + out + "-value/versions", null).body())).hasSize(3);
            Map<String, Integer> codes = new TreeMap<>();
            dead.forEach(r -> codes.merge(new String(r.headers().lastHeader(IdHeader.ERROR).value(), StandardCharsets.UTF_8), 1, Integer::sum));
            assertThat(codes).containsExactly(Map.entry("invalid-value", 15), Map.entry("no-magic-byte", 15), Map.entry("not-record", 15),
                    Map.entry("unknown-schema", 15));
        }
    }

    @Test
    void shouldHoldANewSchemasValuesWhileTheRegistryIsDownAndLoseNothing() throws Exception {
        Topics topics = topics("outage");
        String in = topics.in();
        String out = topics.out();
        String dlq = topics.dlq();
        int v1 = AvroOrders.register(registry, in + "-value", VERSIONS[0]);
        try (StreamsRunner runner = new StreamsRunner(config(in, out, dlq), System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            runner.start();
            send(producer, in, v1, VERSIONS[0], 0, 50);
            assertThat(broker.consume(out, 50, Duration.ofSeconds(180))).hasSize(50);

            proxy.down = true;
            send(producer, in, v1, VERSIONS[0], 50, 100);
            assertThat(broker.consume(out, 100, Duration.ofSeconds(60))).as("a known schema needs no registry").hasSize(100);
            int v2 = AvroOrders.register(registry, in + "-value", VERSIONS[1]);         // the registry itself is up: only the stamper cannot reach it
            send(producer, in, v2, VERSIONS[1], 100, 150);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (runner.stats().schemaRegistry().waitingSince() < 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(runner.stats().schemaRegistry().waitingSince()).as("waiting").isPositive();
            Thread.sleep(3_000);
            assertThat(broker.consume(out, 101, Duration.ofSeconds(2))).as("nothing stamped on a guess").hasSize(100);
            assertThat(broker.consume(dlq, 1, Duration.ofSeconds(1))).as("nothing dead-lettered").isEmpty();

            proxy.down = false;
            List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(out, 150, Duration.ofSeconds(120));
            assertThat(stamped).hasSize(150);
            assertThat(stamped.stream().map(r -> new String(r.key(), StandardCharsets.UTF_8)).distinct().count()).isEqualTo(150);
            assertThat(runner.stats().schemaRegistry().waitingSince()).isEqualTo(-1);
            assertThat(runner.stats().schemaRegistry().failures()).isPositive();
        }
        assertThat(broker.consume(dlq, 1, Duration.ofSeconds(1))).isEmpty();
    }

    /**
     * Issue 40 item 6: a registry wait holds only the partition whose value needs the registry. With the registry
     * unreachable, partition 0 gets values of a new schema (and then a known one, which must wait behind them: input
     * order) and partition 1 values of a known schema: partition 1 stamps on, on the same stream thread, while partition 0
     * waits set aside. Once the registry answers, partition 0 is stamped in input order, and a value of a new schema the
     * registry then refuses goes to the dead-letter topic from the records set aside, with its own key, value and offset.
     * Before, the lookup waited inside the stream thread and partition 1 waited with it.
     */
    @Test
    void shouldStampTheOtherPartitionsWhileOnePartitionWaitsForTheRegistry() throws Exception {
        Topics topics = topics("one-waits");
        String in = topics.in();
        String out = topics.out();
        int v1 = AvroOrders.register(registry, in + "-value", VERSIONS[0]);
        try (StreamsRunner runner = new StreamsRunner(config(in, out, topics.dlq()), System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            runner.start();
            for (int n = 0; n < 20; n++) {
                producer.send(new ProducerRecord<>(in, n % 2, key(n), AvroOrders.value(v1, VERSIONS[0], n)));
            }
            producer.flush();
            assertThat(broker.consume(out, 20, Duration.ofSeconds(180))).hasSize(20);

            proxy.down = true;
            int v2 = AvroOrders.register(registry, in + "-value", VERSIONS[1]);
            int primitive = AvroOrders.register(registry, in + "-refused", "\"long\"");
            for (int n = 100; n < 110; n++) {
                producer.send(new ProducerRecord<>(in, 0, key(n), AvroOrders.value(v2, VERSIONS[1], n)));
            }
            producer.send(new ProducerRecord<>(in, 0, key(110), new byte[] {0, 0, 0, 0, (byte) primitive, 2}));
            for (int n = 111; n < 115; n++) {
                producer.send(new ProducerRecord<>(in, 0, key(n), AvroOrders.value(v1, VERSIONS[0], n)));
            }
            producer.flush();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (runner.stats().schemaRegistry().waitingSince() < 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(runner.stats().schemaRegistry().waitingSince()).as("partition 0 waits for the registry").isPositive();
            for (int n = 200; n < 230; n++) {
                producer.send(new ProducerRecord<>(in, 1, key(n), AvroOrders.value(v1, VERSIONS[0], n)));
            }
            producer.flush();
            List<ConsumerRecord<byte[], byte[]>> during = broker.consume(out, 50, Duration.ofSeconds(30));
            assertThat(during).as("partition 1 stamps on beside the wait").hasSize(50);
            assertThat(broker.consume(out, 51, Duration.ofSeconds(2))).as("partition 0 waits, in input order").hasSize(50);
            assertThat(runner.stats().schemaRegistry().waitingSince()).as("still waiting").isPositive();

            proxy.down = false;
            List<ConsumerRecord<byte[], byte[]>> all = broker.consume(out, 64, Duration.ofSeconds(120));
            assertThat(all).hasSize(64);
            assertThat(all.stream().filter(r -> r.partition() == 0).skip(10).map(r -> new String(r.key(), StandardCharsets.UTF_8)))
                    .as("partition 0 in input order, the refused value left out")
                    .containsExactly("100", "101", "102", "103", "104", "105", "106", "107", "108", "109", "111", "112", "113", "114");
            List<ConsumerRecord<byte[], byte[]>> dead = broker.consume(topics.dlq(), 1, Duration.ofSeconds(30));
            assertThat(dead).hasSize(1);
            ConsumerRecord<byte[], byte[]> refused = dead.get(0);
            assertThat(new String(refused.key(), StandardCharsets.UTF_8)).isEqualTo("110");
            assertThat(refused.value()).containsExactly(0, 0, 0, 0, (byte) primitive, 2);
            assertThat(new String(refused.headers().lastHeader(IdHeader.ERROR).value(), StandardCharsets.UTF_8)).isEqualTo("not-record");
            assertThat(new String(refused.headers().lastHeader("__streams.errors.offset").value(), StandardCharsets.UTF_8))
                    .as("the input offset of the refused record").isEqualTo("20");
            assertThat(new String(refused.headers().lastHeader("__streams.errors.topic").value(), StandardCharsets.UTF_8)).isEqualTo(in);
        }
    }

    /**
     * Exactly-once, a wait longer than the transaction timeout (20 s) with records of a known schema stamped
     * before it in the same transaction: the broker aborts that transaction, and once the registry answers
     * every record is in the committed output exactly once.
     */
    @Test
    void shouldLoseNothingWhenTheWaitOutlastsTheTransaction() throws Exception {
        Topics topics = topics("long-outage");
        int v1 = AvroOrders.register(registry, topics.in() + "-value", VERSIONS[0]);
        try (StreamsRunner runner = new StreamsRunner(config(topics.in(), topics.out(), topics.dlq()), System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            runner.start();
            send(producer, topics.in(), v1, VERSIONS[0], 0, 20);
            assertThat(broker.consume(topics.out(), 20, Duration.ofSeconds(180))).hasSize(20);

            proxy.down = true;
            int v2 = AvroOrders.register(registry, topics.in() + "-value", VERSIONS[1]);
            for (int n = 20; n < 120; n++) {        // known and new schema mixed: the new one blocks mid-transaction
                producer.send(new ProducerRecord<>(topics.in(), key(n), n % 2 == 0
                        ? AvroOrders.value(v1, VERSIONS[0], n) : AvroOrders.value(v2, VERSIONS[1], n)));
            }
            producer.flush();
            Thread.sleep(35_000);
            assertThat(runner.stats().schemaRegistry().waitingSince()).as("still waiting").isPositive();
            proxy.down = false;

            List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(topics.out(), 120, Duration.ofSeconds(180));
            Thread.sleep(2_000);
            stamped = broker.consume(topics.out(), 121, Duration.ofSeconds(3));
            assertThat(stamped.stream().map(r -> new String(r.key(), StandardCharsets.UTF_8)).distinct().count()).isEqualTo(120);
            assertThat(stamped).as("each input record once in the committed output").hasSize(120);
        }
        assertThat(broker.consume(topics.dlq(), 1, Duration.ofSeconds(1))).isEmpty();
    }

    /**
     * Issue 41: a clean stop (SIGTERM) while partition 0's records wait set aside for an unreachable registry, then a
     * restart — with the state directory kept, and with it deleted between the runs (the set-aside records' store is then
     * restored from its changelog alone; recovery.md, "Lost local state"). The restarted stamper holds the same records
     * set aside while the registry is still unreachable, and once it answers each input is in the committed output once,
     * in input order, no ID twice. A child JVM: the stop is the real signal's.
     */
    @ParameterizedTest(name = "state directory lost: {0}")
    @ValueSource(booleans = {false, true})
    void shouldStampTheRecordsWaitingForTheRegistryOnceAfterACleanStopAndRestart(boolean stateLost) throws Exception {
        Topics topics = topics("stop-wait");
        int v1 = AvroOrders.register(registry, topics.in() + "-value", VERSIONS[0]);
        try (SwitchableProxy own = new SwitchableProxy(registry.url());
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("stop-wait"),
                            new Stamper.Topics(topics.in(), topics.out(), topics.dlq()), "sw1")
                    .with("stamp.value-format", "avro").with("schema-registry.url", own.url().toString()).with("admin.port", "0");
            try (ChildJvm first = stamper.start()) {
                sendToPartition0(producer, topics.in(), v1, VERSIONS[0], 0, 20);
                assertThat(broker.consume(topics.out(), 20, Duration.ofSeconds(180))).as(first.logs()).hasSize(20);

                own.down = true;
                int v2 = AvroOrders.register(registry, topics.in() + "-value", VERSIONS[1]);
                // a new schema's values, then known ones behind them (input order: they wait too)
                sendToPartition0(producer, topics.in(), v2, VERSIONS[1], 20, 30);
                sendToPartition0(producer, topics.in(), v1, VERSIONS[0], 30, 40);
                awaitHeldBack(first.adminUrl(), 20);
                assertThat(first.terminate(90)).as("a clean stop mid-wait\n%s", first.logs()).isZero();
            }
            if (stateLost) {
                stamper.deleteStateDir();
            }
            try (ChildJvm second = stamper.start()) {
                awaitHeldBack(second.adminUrl(), 20);      // restored, still waiting: nothing stamped on a guess
                assertThat(broker.consume(topics.out(), 21, Duration.ofSeconds(2))).as("the waiting records still wait").hasSize(20);

                own.down = false;
                List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(topics.out(), 40, Duration.ofSeconds(120));
                Thread.sleep(2_000);        // a copy would come after the 40th: give it the time to show
                stamped = broker.consume(topics.out(), 41, Duration.ofSeconds(3));
                assertThat(stamped).as(second.logs()).extracting(r -> new String(r.key(), StandardCharsets.UTF_8))
                        .as("each input once, in input order").containsExactlyElementsOf(
                                java.util.stream.IntStream.range(0, 40).mapToObj(String::valueOf).toList());
                assertThat(stamped).extracting(r -> IdHeader.parse(r.headers().lastHeader(IdHeader.ID).value()))
                        .as("no ID twice, rising").doesNotHaveDuplicates().isSorted();
                assertThat(second.terminate(90)).as(second.logs()).isZero();
            }
        }
        assertThat(broker.consume(topics.dlq(), 1, Duration.ofSeconds(1))).as("nothing dead-lettered").isEmpty();
    }

    private static void sendToPartition0(KafkaProducer<byte[], byte[]> producer, String topic, int schemaId, String schema, int from,
                                         int to) throws Exception {
        for (int n = from; n < to; n++) {
            producer.send(new ProducerRecord<>(topic, 0, key(n), AvroOrders.value(schemaId, schema, n)));
        }
        producer.flush();
    }

    /** Waits until the stamper at {@code admin} holds exactly {@code records} set aside ({@code snowstamp_held_back_records}). */
    private static void awaitHeldBack(String admin, int records) throws InterruptedException {
        Http.await(admin + "/metrics", r -> r.status() == 200
                && PrometheusText.sum(PrometheusText.parse(r.body()), "snowstamp_held_back_records") == records, 120);
    }

    /**
     * Issue 40 item 9: a registry that restarts empty numbers its schemas from the start again. The producer registers
     * its schema again and gets its old ID back, then another schema gets the ID the stamper kept for the output
     * schema. Within the recheck interval (1 s here) the stamper finds that its output ID names another schema now,
     * registers the output schema again, and the values produced after that carry an ID under which the registry
     * serves the output schema: Apache Avro's reader reads each whole with it. Before, the stamper kept the old ID
     * until it restarted, and every value was framed with the other schema's ID.
     */
    @Test
    void shouldRegisterTheOutputSchemaAgainWhenTheRegistryRestartsEmpty() throws Exception {
        Topics topics = topics("reset");
        String in = topics.in();
        String out = topics.out();
        try (ApicurioRegistry own = ApicurioRegistry.start();
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            int inputId = AvroOrders.register(own, in + "-value", VERSIONS[0]);
            Map<String, String> settings = Map.of("schema-registry.url", own.url().toString(), "schema-registry.recheck-interval", "5s");
            try (StreamsRunner runner = new StreamsRunner(config(in, out, topics.dlq(), settings), System::currentTimeMillis)) {
                runner.start();
                send(producer, in, inputId, VERSIONS[0], 0, 20);
                List<ConsumerRecord<byte[], byte[]>> before = broker.consume(out, 20, Duration.ofSeconds(180));
                assertThat(before).hasSize(20);
                int outputBefore = ByteBuffer.wrap(before.get(0).value(), 1, 4).getInt();
                String outputSchema = served(own, outputBefore);

                own.restartEmpty();
                assertThat(AvroOrders.register(own, in + "-value", VERSIONS[0])).as("the producer's schema gets its old ID back")
                        .isEqualTo(inputId);
                // the next schema registered gets the ID the stamper kept (whichever subject it is in)
                for (int n = 0; n < 5 && !own.call("GET", "/schemas/ids/" + outputBefore, null).body().contains("\"schema\""); n++) {
                    AvroOrders.register(own, TestBroker.unique("other") + "-value", "{\"type\":\"fixed\",\"name\":\"F" + n + "\",\"size\":" + (n + 1) + "}");
                }
                // the precondition, usually met: the ID the stamper kept names another schema now. Under load the stamper's
                // own recheck (every 5 s) can register its output schema first, at that very ID: then what follows checks
                // that the outputs stay right all the same
                boolean reused = !served(own, outputBefore).equals(outputSchema);
                System.out.println("registry reset: the kept output ID " + outputBefore + (reused ? " names another schema now"
                        : " was registered again by the stamper's recheck before another schema took it"));

                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (own.call("GET", "/subjects/" + out + "-value/versions", null).statusCode() != 200 && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                }
                assertThat(own.call("GET", "/subjects/" + out + "-value/versions", null).statusCode())
                        .as("the output schema registered again in the emptied registry").isEqualTo(200);

                send(producer, in, inputId, VERSIONS[0], 20, 40);
                producer.flush();
                List<ConsumerRecord<byte[], byte[]>> all = broker.consume(out, 40, Duration.ofSeconds(120));
                assertThat(all).hasSize(40);
                List<ConsumerRecord<byte[], byte[]>> after = all.stream()
                        .filter(r -> Integer.parseInt(new String(r.key(), StandardCharsets.UTF_8)) >= 20).toList();
                assertThat(after).hasSize(20);
                for (ConsumerRecord<byte[], byte[]> record : after) {
                    int outputId = ByteBuffer.wrap(record.value(), 1, 4).getInt();
                    assertThat(served(own, outputId)).as("output ID %d after the reset", outputId).isEqualTo(outputSchema);
                    GenericRecord read = decodeWhole(new Schema.Parser().parse(served(own, outputId)), record.value());
                    assertThat(read.get("id")).isEqualTo(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value()));
                    assertThat(read.get("customer").toString()).isEqualTo("customer " + new String(record.key(), StandardCharsets.UTF_8));
                }
            }
        }
        assertThat(broker.consume(topics.dlq(), 1, Duration.ofSeconds(1))).isEmpty();
    }

    /**
     * JSON Schema values (byte 0, the schema ID, JSON text): the ID spliced into the text by the JSON mode's splice, the
     * frame's ID the output schema's, which the registry serves as the input schema plus {@code "id": {"type":
     * "integer"}}. Each stamped value is read with the schema the registry serves for its output ID and held against it
     * (no JSON Schema validator is on the test classpath: its properties, required members and closed content model,
     * checked by hand). Values the field cannot go into are dead-lettered with the JSON mode's reasons.
     */
    @Test
    void shouldStampJsonSchemaValuesThatMeetTheServedSchema() throws Exception {
        Topics topics = topics("json-schema");
        String in = topics.in();
        String out = topics.out();
        String schema = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"Order\",\"type\":\"object\","
                + "\"properties\":{\"customer\":{\"type\":\"string\"},\"quantity\":{\"type\":\"integer\"}},"
                + "\"required\":[\"customer\"],\"additionalProperties\":false}";
        HttpResponse<String> registered = registry.call("POST", "/subjects/" + in + "-value/versions",
                JSON.createObjectNode().put("schema", schema).put("schemaType", "JSON").toString());
        assertThat(registered.statusCode()).as(registered.body()).isEqualTo(200);
        int inputId = JSON.readTree(registered.body()).path("id").asInt();
        int count = 60;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < count; n++) {
                producer.send(new ProducerRecord<>(in, key(n), framedJson(inputId, "{ \"customer\": \"customer " + n + "\", \"quantity\": " + n + " }")));
                if (n % 20 == 0) {
                    producer.send(new ProducerRecord<>(in, key(-1), framedJson(inputId, "[1, 2]")));
                    producer.send(new ProducerRecord<>(in, key(-2), framedJson(inputId, "{\"customer\":\"x\",\"id\":7}")));
                    producer.send(new ProducerRecord<>(in, key(-3), framedJson(inputId, "{\"customer\":")));
                    producer.send(new ProducerRecord<>(in, key(-4), "{\"customer\":\"unframed\"}".getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
        try (StreamsRunner runner = new StreamsRunner(config(in, out, topics.dlq(), Map.of("stamp.value-format", "json-schema")),
                System::currentTimeMillis)) {
            runner.start();
            List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(out, count, Duration.ofSeconds(180));
            assertThat(stamped).hasSize(count);
            for (ConsumerRecord<byte[], byte[]> record : stamped) {
                int outputId = ByteBuffer.wrap(record.value(), 1, 4).getInt();
                assertThat(outputId).isNotEqualTo(inputId);
                com.fasterxml.jackson.databind.JsonNode output = JSON.readTree(served(registry, outputId));
                assertThat(output.path("properties").path("id")).isEqualTo(JSON.readTree("{\"type\":\"integer\"}"));
                assertThat(output.path("title").asText()).isEqualTo("Order");
                assertThat(record.value()[0]).isZero();
                com.fasterxml.jackson.databind.JsonNode value = JSON.readTree(
                        new String(record.value(), 5, record.value().length - 5, StandardCharsets.UTF_8));
                int n = Integer.parseInt(new String(record.key(), StandardCharsets.UTF_8));
                assertThat(value.path("id").isIntegralNumber()).isTrue();
                assertThat(value.path("id").asLong()).isEqualTo(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value()));
                assertThat(value.path("customer").asText()).isEqualTo("customer " + n);
                value.fieldNames().forEachRemaining(name -> assertThat(output.path("properties").has(name))
                        .as("additionalProperties false: %s is a property of the output schema", name).isTrue());
                output.path("required").forEach(name -> assertThat(value.has(name.asText())).isTrue());
                assertThat(value.path("customer").isTextual()).isTrue();
                assertThat(value.path("quantity").isIntegralNumber()).isTrue();
            }
            List<ConsumerRecord<byte[], byte[]>> dead = broker.consume(topics.dlq(), 12, Duration.ofSeconds(60));
            Map<String, Integer> codes = new TreeMap<>();
            dead.forEach(r -> codes.merge(new String(r.headers().lastHeader(IdHeader.ERROR).value(), StandardCharsets.UTF_8), 1, Integer::sum));
            assertThat(codes).containsExactly(Map.entry("field-exists", 3), Map.entry("no-magic-byte", 3), Map.entry("not-object", 3),
                    Map.entry("truncated", 3));
        }
    }

    private static byte[] framedJson(int schemaId, String text) {
        byte[] json = text.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + json.length).put((byte) 0).putInt(schemaId).put(json).array();
    }

    /** The schema text {@code registry} serves under {@code id}, or its error answer. */
    private static String served(ApicurioRegistry registry, int id) throws Exception {
        HttpResponse<String> answer = registry.call("GET", "/schemas/ids/" + id, null);
        return answer.statusCode() == 200 ? JSON.readTree(answer.body()).path("schema").asText() : "HTTP " + answer.statusCode() + " " + answer.body();
    }

    @Test
    void shouldStampProtobufValuesReadableByProtobufJava() throws Exception {
        Topics topics = topics("proto");
        String in = topics.in();
        String out = topics.out();
        String dlq = topics.dlq();
        String proto = "syntax = \"proto3\";\npackage acme;\n\nmessage Order {\n  string customer = 1;\n  int32 quantity = 2;\n}\n";
        HttpResponse<String> registered = registry.call("POST", "/subjects/" + in + "-value/versions",
                JSON.createObjectNode().put("schema", proto).put("schemaType", "PROTOBUF").toString());
        int inputId = JSON.readTree(registered.body()).path("id").asInt();
        Descriptors.Descriptor input = orderDescriptor(false);
        int count = 100;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < count; n++) {
                byte[] message = DynamicMessage.newBuilder(input).setField(input.findFieldByName("customer"), "customer " + n)
                        .setField(input.findFieldByName("quantity"), n).build().toByteArray();
                // byte 0, the schema ID, the message indexes [0] (one byte 0), the message
                byte[] value = ByteBuffer.allocate(6 + message.length).put((byte) 0).putInt(inputId).put((byte) 0).put(message).array();
                producer.send(new ProducerRecord<>(in, key(n), value));
            }
        }
        Map<String, String> settings = new HashMap<>(Map.of("stamp.value-format", "protobuf"));
        try (StreamsRunner runner = new StreamsRunner(config(in, out, dlq, settings), System::currentTimeMillis)) {
            runner.start();
            List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(out, count, Duration.ofSeconds(180));
            assertThat(stamped).hasSize(count);
            Descriptors.Descriptor output = orderDescriptor(true);
            for (ConsumerRecord<byte[], byte[]> record : stamped) {
                int outputId = ByteBuffer.wrap(record.value(), 1, 4).getInt();
                assertThat(JSON.readTree(registry.call("GET", "/schemas/ids/" + outputId, null).body()).path("schema").asText())
                        .contains("int64 id = 2047;");
                DynamicMessage read = DynamicMessage.parseFrom(output, java.util.Arrays.copyOfRange(record.value(), 6, record.value().length));
                int n = Integer.parseInt(new String(record.key(), StandardCharsets.UTF_8));
                assertThat(read.getField(output.findFieldByName("id"))).isEqualTo(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value()));
                assertThat(read.getField(output.findFieldByName("customer"))).isEqualTo("customer " + n);
                assertThat(read.getField(output.findFieldByName("quantity"))).isEqualTo(n);
                assertThat(read.getUnknownFields().asMap()).isEmpty();
            }
        }
        assertThat(broker.consume(dlq, 1, Duration.ofSeconds(1))).isEmpty();
    }

    /** acme.Order as protobuf-java describes it, with (the stamper's output) or without {@code int64 id = 2047}. */
    private static Descriptors.Descriptor orderDescriptor(boolean withId) throws Exception {
        DescriptorProtos.DescriptorProto.Builder order = DescriptorProtos.DescriptorProto.newBuilder().setName("Order")
                .addField(field("customer", 1, DescriptorProtos.FieldDescriptorProto.Type.TYPE_STRING))
                .addField(field("quantity", 2, DescriptorProtos.FieldDescriptorProto.Type.TYPE_INT32));
        if (withId) {
            order.addField(field("id", 2047, DescriptorProtos.FieldDescriptorProto.Type.TYPE_INT64));
        }
        DescriptorProtos.FileDescriptorProto file = DescriptorProtos.FileDescriptorProto.newBuilder().setName("order.proto")
                .setPackage("acme").setSyntax("proto3").addMessageType(order).build();
        return Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[0]).findMessageTypeByName("Order");
    }

    private static DescriptorProtos.FieldDescriptorProto field(String name, int number, DescriptorProtos.FieldDescriptorProto.Type type) {
        return DescriptorProtos.FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(DescriptorProtos.FieldDescriptorProto.Label.LABEL_OPTIONAL).build();
    }

    @Test
    void shouldStopAtStartWithOneLineAndExit2OnRefusedCredentials() throws Exception {
        Topics topics = topics("creds");
        String in = topics.in();
        String out = topics.out();
        String dlq = topics.dlq();
        // Apicurio's own authentication needs an OpenID server: a registry that refuses basic credentials stands in
        HttpServer refusing = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        refusing.createContext("/", exchange -> {
            exchange.sendResponseHeaders(401, -1);
            exchange.close();
        });
        refusing.start();
        try {
            String url = "http://127.0.0.1:" + refusing.getAddress().getPort();
            Cli.Result run = Cli.run("run", "--bootstrap-servers", broker.bootstrapServers(), "--state-dir", work.resolve("state").toString(),
                    "--set", "input.topic=" + in, "--set", "output.topic=" + out, "--set", "dlq.topic=" + dlq,
                    "--set", "id.worker-registry=off", "--set", "stamp.value-format=avro", "--set", "schema-registry.url=" + url,
                    "--set", "schema-registry.username=alice", "--set", "schema-registry.password=wrong");
            assertThat(run.exitCode()).as(run.toString()).isEqualTo(2);
            OneLine.assertOneErrorLine(run.err(), run.toString());
            assertThat(run.err()).contains("schema-registry.username=alice: the schema registry at " + url
                    + " refused these credentials (HTTP 401)").doesNotContain("wrong");
        } finally {
            refusing.stop(0);
        }
    }

    private SnowstampConfig config(String in, String out, String dlq) {
        return config(in, out, dlq, Map.of());
    }

    /** Avro values through the switchable proxy, unless {@code more} says otherwise. */
    private SnowstampConfig config(String in, String out, String dlq, Map<String, String> more) {
        Map<String, String> settings = new HashMap<>(Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "state.dir", work.resolve("state").toString(), "instance.id", "schema",
                "application.id", TestBroker.unique("schema-app"), "input.topic", in, "output.topic", out, "dlq.topic", dlq,
                "id.worker-registry", "off", "stamp.value-format", "avro", "schema-registry.url", proxy.url().toString()));
        settings.putAll(more);
        return ConfigLoader.load(null, Map.of(), settings);
    }

    private record Topics(String in, String out, String dlq) {
    }

    /** Input and output of two partitions, a dead-letter topic of one, named after {@code prefix} and unique. */
    private static Topics topics(String prefix) throws Exception {
        Topics topics = new Topics(TestBroker.unique(prefix + "-in"), TestBroker.unique(prefix + "-out"), TestBroker.unique(prefix + "-dlq"));
        broker.createTopic(topics.in(), 2);
        broker.createTopic(topics.out(), 2);
        broker.createTopic(topics.dlq(), 1);
        return topics;
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, int schemaId, String schema, int from, int to)
            throws Exception {
        for (int n = from; n < to; n++) {
            producer.send(new ProducerRecord<>(topic, key(n), AvroOrders.value(schemaId, schema, n)));
        }
        producer.flush();
    }

    private static byte[] key(int n) {
        return String.valueOf(n).getBytes(StandardCharsets.UTF_8);
    }

    private static Schema schemaById(int id) {
        try {
            return new Schema.Parser().parse(JSON.readTree(registry.call("GET", "/schemas/ids/" + id, null).body()).path("schema").asText());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static GenericRecord decodeWhole(Schema schema, byte[] framed) throws Exception {
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(framed, 5, framed.length - 5, null);
        GenericRecord record = new GenericDatumReader<GenericRecord>(schema).read(null, decoder);
        assertThat(decoder.isEnd()).isTrue();
        return record;
    }

    /** Forwards to the registry, or answers 503 while {@link #down}: an outage the registry's data survives. */
    private static final class SwitchableProxy implements AutoCloseable {
        private static final HttpClient HTTP = HttpClient.newHttpClient();
        private final HttpServer server;
        private final java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(4);
        volatile boolean down;

        SwitchableProxy(URI target) throws Exception {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", exchange -> {
                byte[] body = exchange.getRequestBody().readAllBytes();
                int status;
                byte[] answer;
                if (down) {
                    status = 503;
                    answer = "{\"error_code\":50301,\"message\":\"down\"}".getBytes(StandardCharsets.UTF_8);
                } else {
                    String path = exchange.getRequestURI().getRawPath().substring("/registry".length());
                    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(target + path))
                            .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
                    String type = exchange.getRequestHeaders().getFirst("Content-Type");
                    if (type != null) {
                        request.header("Content-Type", type);
                    }
                    try {
                        HttpResponse<byte[]> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
                        status = response.statusCode();
                        answer = response.body();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        status = 503;
                        answer = new byte[0];
                    }
                }
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(status, answer.length == 0 ? -1 : answer.length);
                exchange.getResponseBody().write(answer);
                exchange.close();
            });
            server.setExecutor(threads);
            server.start();
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/registry");
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }
}
