package io.snowstamp.sequence;

import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sequence tail scan on a real broker: where it says it read from. A start trusts that offset to tell whether
 * records past its checkpoint were deleted before it read them ({@link ResumeRule}: resume above the segments then).
 */
@Timeout(120)
class SequenceTailReaderIT extends OnSharedBroker {
    /**
     * The seventh review's schedule: one reader per instance caches every partition's log start for a minute; records
     * deleted within that minute (deleteRecords, or retention of back-filled old timestamps) made its next scan report
     * the checkpoint's offset as where it began — the consumer silently began at the real log start — and the start
     * resumed inside its segment, after numbers already issued.
     */
    @Test
    void shouldReportWhereTheRecordsBeginWhenTheyWereDeletedSinceTheReaderLastLooked() throws Exception {
        String topic = TestBroker.unique("sequence-tail");
        broker.createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 1; n <= 8; n++) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, null, new byte[0]);
                record.headers().add(IdHeader.TAG, (n <= 6 ? "order" : "refund").getBytes(StandardCharsets.UTF_8));
                record.headers().add(IdHeader.ID, Long.toString(n <= 6 ? 1000 + n : n - 6).getBytes(StandardCharsets.US_ASCII));
                producer.send(record).get();
            }
        }
        Properties client = new Properties();
        client.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        try (SequenceTailReader reader = new SequenceTailReader(client, topic, Duration.ofSeconds(20)); Admin admin = Admin.create(client)) {
            SequenceTail.Scan before = reader.scan(0, 3);       // caches the log start, 0
            assertThat(before.fromOffset()).isEqualTo(3);
            assertThat(before.highest()).containsEntry("order", 1006L).containsEntry("refund", 2L);

            admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(6))).all().get();
            SequenceTail.Scan after = reader.scan(0, 3);

            assertThat(after.fromOffset()).as("the records from the checkpoint's offset 3 to 5 are gone").isEqualTo(6);
            assertThat(after.highest()).doesNotContainKey("order").containsEntry("refund", 2L);
            assertThat(after.endOffset()).isEqualTo(8);
        }
    }
}
