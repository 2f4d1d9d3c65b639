package io.snowstamp.it;

import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The mechanism the exactly-once corner of design.md rests on ("Exactly-once: an old owner frozen after its offsets"),
 * on a real broker: a transaction whose offsets for an input partition the group coordinator accepted, frozen before its
 * records and its end were sent, holds on no output or changelog partition — {@code TransactionFence} finds nothing to
 * fence — but a {@code read_committed} consumer of the group (Kafka Streams' main consumer under exactly-once) gets no
 * committed offset for that partition until the transaction ends: the broker answers the fetch as unstable
 * (KIP-447). Kafka Streams fetches a task's committed offsets before it initialises the task's processors, so a new
 * owner's tail read and lease start come after the old owner's transaction committed (its records then in the log) or
 * aborted.
 */
@Tag("integration")
class PendingOffsetsIT extends OnSharedBroker {

    @Test
    void shouldWithholdTheCommittedOffsetFromAReadCommittedConsumerWhileATransactionHoldsItPending() throws Exception {
        String input = TestBroker.unique("pending-in");
        String output = TestBroker.unique("pending-out");
        String group = TestBroker.unique("pending-group");
        String transactionalId = group + "-old-owner";
        broker.createTopic(input, 1);
        broker.createTopic(output, 1);
        TopicPartition partition = new TopicPartition(input, 0);

        try (KafkaProducer<byte[], byte[]> old = producer(transactionalId);
             KafkaConsumer<byte[], byte[]> next = consumer(group, "read_committed");
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            old.initTransactions();
            old.beginTransaction();
            // the commit's first half: the offsets accepted; then the old owner freezes, its records and EndTxn unsent
            old.sendOffsetsToTransaction(Map.of(partition, new OffsetAndMetadata(5)), new ConsumerGroupMetadata(group));

            TransactionDescription open = admin.describeTransactions(Set.of(transactionalId)).all().get(30, TimeUnit.SECONDS)
                    .get(transactionalId);
            assertThat(open.topicPartitions()).as("the fence looks for the output and changelog partitions: none is held")
                    .noneMatch(tp -> tp.topic().equals(output) || tp.topic().equals(input));

            Throwable waited = catchThrowable(() -> next.committed(Set.of(partition), Duration.ofSeconds(3)));
            assertThat(waited).as("no committed offset while the transaction holds one pending").isInstanceOf(TimeoutException.class);

            old.commitTransaction();        // the old owner wakes within the transaction timeout and commits
            Map<TopicPartition, OffsetAndMetadata> committed = next.committed(Set.of(partition), Duration.ofSeconds(30));
            assertThat(committed.get(partition).offset()).as("answered once the transaction ended").isEqualTo(5);
        }
    }

    private KafkaProducer<byte[], byte[]> producer(String transactionalId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private KafkaConsumer<byte[], byte[]> consumer(String group, String isolation) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
