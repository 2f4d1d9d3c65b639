package io.snowstamp.runtime;

import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Issue 39's exactly-once schedule without offsets, on a real broker: a stream thread whose partition moved while it was
 * stopped (its member gone from the group, its consumer not yet told) wakes with records in its open transaction and
 * no input offsets — a drain of records set aside, by a task that consumed nothing since it started. Kafka's producer
 * sends no offsets for an empty map, so nothing checks its generation and the commit goes through (the control below);
 * through the stamper's producer wrapper ({@link GenerationCheck}) the same commit carries the partition's committed
 * offset and the group coordinator refuses it.
 */
@Tag("integration")
class GenerationCheckIT extends OnSharedBroker {

    @Test
    void shouldRefuseTheCommitOfAThreadWhoseGenerationIsGoneThoughKafkaStreamsSentNoOffsets() throws Exception {
        String input = TestBroker.unique("generation-in");
        String output = TestBroker.unique("generation-out");
        String group = TestBroker.unique("generation-group");
        broker.createTopic(input, 1);
        broker.createTopic(output, 1);
        TopicPartition in0 = new TopicPartition(input, 0);
        GenerationCheck generation = new GenerationCheck();

        try (KafkaConsumer<byte[], byte[]> old = consumer(group, 3_000);
             Producer<byte[], byte[]> checked = new AcknowledgingProducer(producer(group + "-old"), null, generation,
                     Duration.ofSeconds(20));
             Producer<byte[], byte[]> unchecked = producer(group + "-control");
             KafkaConsumer<byte[], byte[]> next = consumer(group, 30_000)) {
            old.subscribe(List.of(input));
            pollUntilAssigned(old, in0);
            generation.polledBy(old);
            checked.initTransactions();
            unchecked.initTransactions();
            checked.beginTransaction();
            checked.send(new ProducerRecord<>(output, 0, null, text("before")));
            checked.sendOffsetsToTransaction(Map.of(in0, new OffsetAndMetadata(1, "partition time")), old.groupMetadata());
            checked.commitTransaction();
            ConsumerGroupMetadata stale = old.groupMetadata();

            // the old owner stops polling (frozen): past max.poll.interval.ms it leaves, and the partition moves
            next.subscribe(List.of(input));
            pollUntilAssigned(next, in0);
            assertThat(old.assignment()).as("the old owner has not polled since: it still believes it owns the partition").contains(in0);

            // it wakes: a drain's records, no offsets (StreamsProducer.commitTransaction passes Kafka Streams' empty map)
            unchecked.beginTransaction();
            unchecked.send(new ProducerRecord<>(output, 0, null, text("unchecked zombie")));
            unchecked.sendOffsetsToTransaction(Map.of(), stale);
            unchecked.commitTransaction();
            checked.beginTransaction();
            checked.send(new ProducerRecord<>(output, 0, null, text("checked zombie")));
            Throwable refused = catchThrowable(() -> {
                checked.sendOffsetsToTransaction(Map.of(), stale);
                checked.commitTransaction();
            });
            assertThat(refused).as("the group coordinator checked the generation").isInstanceOf(KafkaException.class);
            checked.abortTransaction();      // as Kafka Streams does on a task migrated

            assertThat(readCommitted(output)).as("without the check Kafka commits a zombie's records; with it, not")
                    .containsExactly("before", "unchecked zombie");
            assertThat(next.committed(java.util.Set.of(in0), Duration.ofSeconds(30)).get(in0))
                    .as("the committed offset the check sent back is the one it found").isEqualTo(new OffsetAndMetadata(1, "partition time"));
        }
    }

    private static void pollUntilAssigned(KafkaConsumer<byte[], byte[]> consumer, TopicPartition partition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!consumer.assignment().contains(partition)) {
            assertThat(System.nanoTime()).as("assigned within 60 s").isLessThan(deadline);
            consumer.poll(Duration.ofMillis(200));
        }
    }

    private List<String> readCommitted(String topic) {
        List<String> values = new ArrayList<>();
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition(topic, 0);
            reader.assign(List.of(partition));
            reader.seekToBeginning(List.of(partition));
            long end = reader.endOffsets(List.of(partition)).get(partition);
            while (reader.position(partition) < end) {
                for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(200))) {
                    values.add(new String(record.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return values;
    }

    private KafkaProducer<byte[], byte[]> producer(String transactionalId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private KafkaConsumer<byte[], byte[]> consumer(String group, int maxPollIntervalMs) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, maxPollIntervalMs);
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000);
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static byte[] text(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
