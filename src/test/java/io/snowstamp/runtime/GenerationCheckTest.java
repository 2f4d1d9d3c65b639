package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The offsets a stream thread's transaction commits with, as Kafka Streams drives its producer under exactly-once
 * ({@code StreamsProducer.commitTransaction}: begin, send, offsets, commit), through the stamper's producer wrapper.
 */
class GenerationCheckTest {
    private static final ConsumerGroupMetadata GROUP = new ConsumerGroupMetadata("app", 7, "member-1", Optional.empty());
    private final TopicPartition in0 = new TopicPartition("in", 0);
    private final TopicPartition in1 = new TopicPartition("in", 1);
    private final TopicPartition in2 = new TopicPartition("in", 2);
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
    private final MockProducer<byte[], byte[]> kafka = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final GenerationCheck generation = new GenerationCheck();
    private final AcknowledgingProducer producer = new AcknowledgingProducer(kafka, null, generation, java.time.Duration.ofSeconds(20));

    @BeforeEach
    void threadWithThreeInputPartitions() {
        consumer.assign(List.of(in0, in1, in2));
        consumer.commitSync(Map.of(in0, new OffsetAndMetadata(40, "t0"), in1, new OffsetAndMetadata(41, "t1")));
        generation.polledBy(consumer);
        producer.initTransactions();
    }

    @Test
    void shouldCommitTheCommittedOffsetsOfTheInputPartitionsATransactionWithoutOffsetsWroteFor() {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 1, null, new byte[1]));
        producer.send(new ProducerRecord<>("app-worker-state-changelog", 1, null, new byte[1]));
        producer.sendOffsetsToTransaction(Map.of(), GROUP);     // a drain of a task that consumed nothing since its start
        producer.commitTransaction();

        assertThat(kafka.consumerGroupOffsetsHistory()).as("the generation checked, the committed offset sent unchanged")
                .containsExactly(Map.of("app", Map.of(in1, new OffsetAndMetadata(41, "t1"))));
    }

    @Test
    void shouldLeaveTheOffsetsKafkaStreamsSendsAlone() {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 1, null, new byte[1]));
        producer.sendOffsetsToTransaction(Map.of(in0, new OffsetAndMetadata(50, "t")), GROUP);
        producer.commitTransaction();

        assertThat(kafka.consumerGroupOffsetsHistory()).containsExactly(Map.of("app", Map.of(in0, new OffsetAndMetadata(50, "t"))));
    }

    @Test
    void shouldForgetWhatAnEarlierTransactionWrote() {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 0, null, new byte[1]));
        producer.sendOffsetsToTransaction(Map.of(in0, new OffsetAndMetadata(50, "t")), GROUP);
        producer.commitTransaction();
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 1, null, new byte[1]));
        producer.sendOffsetsToTransaction(Map.of(), GROUP);
        producer.commitTransaction();

        assertThat(kafka.consumerGroupOffsetsHistory()).last().isEqualTo(Map.of("app", Map.of(in1, new OffsetAndMetadata(41, "t1"))));
    }

    @Test
    void shouldSendNothingInPlaceOfOffsetsNoOneCommittedYet() {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 2, null, new byte[1]));    // in-2: a group's first commit
        producer.sendOffsetsToTransaction(Map.of(), GROUP);
        producer.commitTransaction();

        assertThat(kafka.consumerGroupOffsetsHistory()).isEmpty();
    }

    @Test
    void shouldNeverCommitAPartitionTheThreadIsNotAssigned() {
        consumer.assign(List.of(in0));      // in-1 moved to another thread
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 1, null, new byte[1]));
        producer.sendOffsetsToTransaction(Map.of(), GROUP);
        producer.commitTransaction();

        assertThat(kafka.consumerGroupOffsetsHistory()).isEmpty();
    }

    @Test
    void shouldFailTheCommitRatherThanSendItUncheckedWhenTheCommittedOffsetsDoNotCome() {
        MockConsumer<byte[], byte[]> unreachable = new MockConsumer<>("earliest") {
            @Override
            public synchronized Map<TopicPartition, OffsetAndMetadata> committed(java.util.Set<TopicPartition> partitions,
                                                                                 java.time.Duration timeout) {
                throw new org.apache.kafka.common.errors.TimeoutException("group coordinator out of reach");
            }
        };
        unreachable.assign(List.of(in1));
        generation.polledBy(unreachable);
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("out", 1, null, new byte[1]));

        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> producer.sendOffsetsToTransaction(Map.of(), GROUP)))
                .as("Kafka Streams takes it for a migrated task: the transaction is aborted")
                .isInstanceOf(org.apache.kafka.clients.consumer.CommitFailedException.class).hasMessageContaining("10000 ms");
        assertThat(kafka.consumerGroupOffsetsHistory()).isEmpty();
    }

    @Test
    void shouldCheckNothingOnAThreadWhoseMainConsumerIsNotTheStampers() throws Exception {
        // group.protocol=streams: Kafka Streams builds the main consumer itself, and it never polls through the wrapper
        Thread other = new Thread(() -> {
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("out", 1, null, new byte[1]));
            producer.sendOffsetsToTransaction(Map.of(), GROUP);
            producer.commitTransaction();
        });
        other.start();
        other.join();

        assertThat(kafka.consumerGroupOffsetsHistory()).isEmpty();
        assertThat(kafka.history()).hasSize(1);
    }
}
