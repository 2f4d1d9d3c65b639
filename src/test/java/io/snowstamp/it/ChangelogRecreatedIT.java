package io.snowstamp.it;

import io.snowstamp.lease.LeaseCodec;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseVerifier;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A changelog topic deleted and created again under its name while a holder runs: the holder's lease is lost, though
 * the new log's holder names a lower epoch (its epochs start again) and the new log is shorter than what the holder had
 * read. Before the lease reader knew topic IDs, its position past the new log's end counted as "read to the end" and
 * the old holder stayed confirmed beside the new one.
 */
@Tag("integration")
@Timeout(120)
class ChangelogRecreatedIT extends OnSharedBroker {
    /** A test store's lease record: the value {@code epoch/holder}. */
    private static final LeaseCodec CODEC = (key, value) -> {
        String[] parts = new String(value, StandardCharsets.UTF_8).split("/", 2);
        return new LeaseMark(Long.parseLong(parts[0]), parts[1]);
    };

    @Test
    void shouldLoseTheLeaseOfAHolderWhoseChangelogTopicIsCreatedAgain() throws Exception {
        String changelog = TestBroker.unique("recreated-changelog");
        broker.createTopic(changelog, 1);
        TopicPartition tp = new TopicPartition(changelog, 0);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int i = 0; i < 20; i++) {      // earlier holders: the old log is longer than the new one will be
                producer.send(new ProducerRecord<>(changelog, 0, null, lease(i + 1, "earlier")));
            }
            producer.flush();
        }
        try (LeaseVerifier verifier = new LeaseVerifier(client(), reader(), writer(), Map.of(changelog, CODEC), "recreated")) {
            LeaseGuard guard = verifier.take(new TaskId(0, 0), tp, new LeaseMark(21, "old-holder"), new byte[0],
                    lease(21, "old-holder"), "0_0", false);
            assertThat(guard.check()).as("confirmed after the takeover wait").isTrue();

            TestBroker.deleteTopic(broker.bootstrapServers(), changelog);
            awaitGone(changelog);
            broker.createTopic(changelog, 1);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                producer.send(new ProducerRecord<>(changelog, 0, null, lease(1, "new-holder"))).get();
            }

            long deadline = System.nanoTime() + 20_000_000_000L;
            while (!guard.lost() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(guard.lost()).as("the old holder's lease is lost once its topic is another").isTrue();
        }
    }

    private void awaitGone(String topic) throws Exception {
        try (var admin = org.apache.kafka.clients.admin.Admin.create(client())) {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (admin.listTopics().names().get().contains(topic) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
        }
    }

    private static byte[] lease(long epoch, String holder) {
        return (epoch + "/" + holder).getBytes(StandardCharsets.UTF_8);
    }

    private Properties client() {
        Properties props = new Properties();
        props.put("bootstrap.servers", broker.bootstrapServers());
        return props;
    }

    private Properties reader() {
        Properties props = client();
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return props;
    }

    private Properties writer() {
        Properties props = client();
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return props;
    }
}
