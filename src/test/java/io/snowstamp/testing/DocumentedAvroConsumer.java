package io.snowstamp.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BooleanSupplier;

/**
 * The Avro consumer of {@code src/site/markdown/consuming.md}, as code that runs: values framed for a
 * schema registry, decoded with the schema the registry serves for each value's ID, the ID taken from
 * the value's field. The page's blocks are {@link #TABLE} and the text between the two {@code consuming.md}
 * markers ({@code ConsumingDocsTest}); {@code AvroPostgresIT} runs it against a real PostgreSQL and
 * Apicurio's registry. Change the recipe here, never on the page alone.
 */
public final class DocumentedAvroConsumer {
    /** The table of the recipe (the page's {@code sql} block). */
    public static final String TABLE = """
            CREATE TABLE orders (
                id        bigint PRIMARY KEY,   -- the value's id field
                source    text UNIQUE,          -- snowstamp-src: topic/partition/offset of the input record
                customer  text,
                quantity  int
            );
            """;

    private DocumentedAvroConsumer() {
    }

    // consuming.md: begin
    /** Copies a stamped topic of Avro values into table orders, until running says stop. */
    public static void copy(String bootstrapServers, String group, String topic, String registryUrl, String jdbcUrl,
                            BooleanSupplier running) throws SQLException, IOException, InterruptedException {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");   // rule 1
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");          // offsets after the database
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        HttpClient http = HttpClient.newHttpClient();
        ObjectMapper json = new ObjectMapper();
        Map<Integer, GenericDatumReader<GenericRecord>> readers = new HashMap<>();   // one registry call per schema
        String sql = "INSERT INTO orders (id, source, customer, quantity) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING";   // rule 3
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
             Connection db = DriverManager.getConnection(jdbcUrl);
             PreparedStatement insert = db.prepareStatement(sql)) {
            db.setAutoCommit(false);
            consumer.subscribe(List.of(topic));
            while (running.getAsBoolean()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofSeconds(1));
                if (records.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    byte[] value = record.value();             // byte 0, the schema ID (4 bytes), the Avro record
                    int schemaId = ByteBuffer.wrap(value, 1, 4).getInt();
                    GenericDatumReader<GenericRecord> reader = readers.get(schemaId);
                    if (reader == null) {
                        HttpRequest get = HttpRequest.newBuilder(URI.create(registryUrl + "/schemas/ids/" + schemaId)).build();
                        String schema = json.readTree(http.send(get, HttpResponse.BodyHandlers.ofString()).body()).path("schema").asText();
                        reader = new GenericDatumReader<>(new Schema.Parser().parse(schema));
                        readers.put(schemaId, reader);
                    }
                    GenericRecord order = reader.read(null, DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, null));
                    Header source = record.headers().lastHeader("snowstamp-src");
                    insert.setLong(1, (Long) order.get("id"));                                  // rule 2: the value's field
                    insert.setString(2, source == null ? null : new String(source.value(), StandardCharsets.UTF_8));
                    insert.setString(3, order.get("customer").toString());
                    if (order.hasField("quantity")) {                                           // a field of newer versions
                        insert.setInt(4, (Integer) order.get("quantity"));
                    } else {
                        insert.setNull(4, Types.INTEGER);
                    }
                    insert.addBatch();
                }
                insert.executeBatch();
                db.commit();
                consumer.commitSync();   // a crash before this line replays the batch: rule 3 makes that harmless
            }
        }
    }
    // consuming.md: end
}
