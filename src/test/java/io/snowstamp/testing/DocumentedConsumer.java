package io.snowstamp.testing;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.BooleanSupplier;

/**
 * The plain consumer of {@code src/site/markdown/consuming.md}, as code that runs: the page's SQL
 * block is {@link #TABLE} and its Java block is the text between the two {@code consuming.md}
 * markers below, and {@code ConsumingDocsTest} fails when the page differs ({@code
 * -Dsnowstamp.docs.write=true} rewrites it). {@code PostgresConsumerIT} runs it against a real
 * PostgreSQL. Change the recipe here, never on the page alone.
 */
public final class DocumentedConsumer {
    /** The table of the recipe (the page's {@code sql} block). */
    public static final String TABLE = """
            CREATE TABLE events (
                id      bigint PRIMARY KEY,   -- the snowstamp ID
                source  text UNIQUE,          -- snowstamp-src: topic/partition/offset of the input record
                payload jsonb
            );
            -- the records whose value events refuses (not JSON, or a JSON string holding U+0000), as they came
            CREATE TABLE events_refused (
                id      bigint PRIMARY KEY,
                source  text,
                value   bytea,
                reason  text                  -- what PostgreSQL said
            );
            """;

    private DocumentedConsumer() {
    }

    // consuming.md: begin
    /** Copies a stamped topic into table events, until running says stop. */
    public static void copy(String bootstrapServers, String group, String topic, String jdbcUrl, BooleanSupplier running)
            throws SQLException {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");   // rule 1
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");          // offsets after the database
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        // rule 3: a row whose id (a replay) or source (at_least_once's second copy) is there already is skipped
        String sql = "INSERT INTO events (id, source, payload) VALUES (?, ?, ?::jsonb) ON CONFLICT DO NOTHING";
        String refusedSql = "INSERT INTO events_refused (id, source, value, reason) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING";
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
             Connection db = DriverManager.getConnection(jdbcUrl);
             PreparedStatement insert = db.prepareStatement(sql);
             PreparedStatement refused = db.prepareStatement(refusedSql)) {
            db.setAutoCommit(false);
            consumer.subscribe(List.of(topic));
            while (running.getAsBoolean()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofSeconds(1));
                if (records.isEmpty()) {
                    continue;
                }
                try {
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        bind(insert, record);
                        insert.addBatch();
                    }
                    insert.executeBatch();
                } catch (SQLException e) {
                    if (!refusesTheValue(e)) {
                        throw e;   // the database is down, or the table wrong: stop; a restart replays the batch
                    }
                    db.rollback();   // one value the table refuses: the batch again, record by record
                    insert.clearBatch();
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        insertOrRefuse(db, insert, refused, record);
                    }
                }
                db.commit();
                consumer.commitSync();   // a crash before this line replays the batch: rule 3 makes that harmless
            }
        }
    }

    /** One record into events, or, when events refuses its value, into events_refused with PostgreSQL's reason. */
    private static void insertOrRefuse(Connection db, PreparedStatement insert, PreparedStatement refused,
                                       ConsumerRecord<byte[], byte[]> record) throws SQLException {
        Savepoint before = db.setSavepoint();
        try {
            bind(insert, record);
            insert.executeUpdate();
        } catch (SQLException e) {
            if (!refusesTheValue(e)) {
                throw e;
            }
            db.rollback(before);
            refused.setLong(1, id(record));
            refused.setString(2, source(record));
            refused.setBytes(3, record.value());
            refused.setString(4, e.getMessage());
            refused.executeUpdate();
        }
        db.releaseSavepoint(before);
    }

    private static void bind(PreparedStatement insert, ConsumerRecord<byte[], byte[]> record) throws SQLException {
        insert.setLong(1, id(record));
        insert.setString(2, source(record));
        insert.setString(3, record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8));
    }

    /** Rule 2: the ID the stamper gave the record. */
    private static long id(ConsumerRecord<byte[], byte[]> record) {
        return Long.parseLong(new String(record.headers().lastHeader("snowstamp-id").value(), StandardCharsets.US_ASCII));
    }

    /** snowstamp-src: topic/partition/offset of the input record (null with stamp.provenance=false). */
    private static String source(ConsumerRecord<byte[], byte[]> record) {
        Header source = record.headers().lastHeader("snowstamp-src");
        return source == null ? null : new String(source.value(), StandardCharsets.UTF_8);
    }

    /** SQLSTATE class 22, data exception: the value itself (22P02: not JSON; 22P05: U+0000 in a JSON string). */
    private static boolean refusesTheValue(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("22");
    }
    // consuming.md: end
}
