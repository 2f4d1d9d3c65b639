package io.snowstamp.runtime;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import io.snowstamp.ownership.WriteAcks;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaClientSupplier;

import java.util.Map;
import java.util.function.Predicate;

/**
 * The clients Kafka Streams creates, as the configured supplier makes them (Kafka's default unless
 * {@code default.client.supplier} names another), with each main consumer wrapped for starting tasks
 * ({@link StartingTasksConsumer}) and each producer wrapped ({@link AcknowledgingProducer}) where it tells the tasks which
 * worker-state writes were acknowledged (snowflake mode) or checks the generation of every commit (exactly-once). Used by the classic group protocol, Kafka Streams' default; the
 * {@code streams} protocol (KIP-1071) creates its main consumer itself, and its tasks start as before.
 */
final class StamperClients implements KafkaClientSupplier {
    private final KafkaClientSupplier clients;
    private final Predicate<TopicPartition> awaitingTakeover;
    private final StartStats stats;
    private final WriteAcks acks;
    /** Run on a stream thread before each poll of its main consumer (a clean stop's last IDs: {@code StamperStats#beforePoll}). */
    private final Runnable beforeEachPoll;
    /** Told the partitions of each committed-offset request of a main consumer, once answered. */
    private final java.util.function.Consumer<java.util.Set<TopicPartition>> committedFetched;
    /** Each thread's main consumer, for the commits of its producer whose offsets Kafka Streams left empty. */
    private final GenerationCheck generation = new GenerationCheck();

    /**
     * @param clients          the supplier Kafka Streams would use
     * @param awaitingTakeover whether an input partition's task still waits out its predecessor's lease
     * @param acks             told of every state write the broker acknowledged
     * @param beforeEachPoll   run on a stream thread before each poll of its main consumer
     * @param committedFetched told the partitions of each committed-offset request of a main consumer, once answered
     */
    StamperClients(KafkaClientSupplier clients, Predicate<TopicPartition> awaitingTakeover, StartStats stats, WriteAcks acks,
                   Runnable beforeEachPoll, java.util.function.Consumer<java.util.Set<TopicPartition>> committedFetched) {
        this.committedFetched = committedFetched;
        this.beforeEachPoll = beforeEachPoll;
        this.clients = clients;
        this.acks = acks;
        this.awaitingTakeover = awaitingTakeover;
        this.stats = stats;
    }

    @Override
    public Admin getAdmin(Map<String, Object> config) {
        return clients.getAdmin(config);
    }

    @Override
    public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
        Producer<byte[], byte[]> producer = clients.getProducer(config);
        GenerationCheck checked = config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG) == null ? null : generation;
        Object timeout = config.getOrDefault(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000);
        return acks == null && checked == null ? producer
                : new AcknowledgingProducer(producer, acks, checked, java.time.Duration.ofMillis(Long.parseLong(String.valueOf(timeout))));
    }

    @Override
    public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
        return StartingTasksConsumer.wrap(clients.getConsumer(config), new TakeoverHold(awaitingTakeover), stats, beforeEachPoll,
                committedFetched, generation);
    }

    @Override
    public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
        return clients.getRestoreConsumer(config);
    }

    @Override
    public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
        return clients.getGlobalConsumer(config);
    }
}
