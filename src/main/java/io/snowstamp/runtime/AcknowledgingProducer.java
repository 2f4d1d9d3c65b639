package io.snowstamp.runtime;

import io.snowstamp.ownership.WriteAcks;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;

/**
 * The producer Kafka Streams writes with, unchanged but for one thing: when the broker acknowledges a state record
 * (snowflake mode's worker state, sequence mode's segments), the task that wrote it hears so ({@link WriteAcks}) — the
 * acknowledgement its write-ahead reservations wait for. The same producer keeps the changelog's order: a task's writes are never split over two producers, so the newest
 * record of a partition is always its newest state.
 */
final class AcknowledgingProducer implements Producer<byte[], byte[]> {
    private final Producer<byte[], byte[]> producer;
    private final WriteAcks acks;
    private final CommitFreezeHook freeze = CommitFreezeHook.fromSystemProperties();

    AcknowledgingProducer(Producer<byte[], byte[]> producer, WriteAcks acks) {
        this.producer = producer;
        this.acks = acks;
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
        LongConsumer acknowledged = acks.onSend(record.topic(), record.partition(), record.key(), record.value());
        if (acknowledged == null) {
            return producer.send(record, callback);
        }
        return producer.send(record, (metadata, error) -> {
            if (error == null) {
                acknowledged.accept(metadata.offset());
            }
            if (callback != null) {
                callback.onCompletion(metadata, error);
            }
        });
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        return send(record, null);
    }

    @Override
    public void initTransactions() {
        producer.initTransactions();
    }

    @Override
    public void beginTransaction() {
        producer.beginTransaction();
    }

    @Override
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
        producer.sendOffsetsToTransaction(offsets, groupMetadata);
        freeze.offsetsAccepted(offsets);
    }

    @Override
    public void commitTransaction() {
        producer.commitTransaction();
    }

    @Override
    public void abortTransaction() {
        producer.abortTransaction();
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        producer.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        producer.unregisterMetricFromSubscription(metric);
    }

    @Override
    public void flush() {
        producer.flush();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return producer.partitionsFor(topic);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return producer.metrics();
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return producer.clientInstanceId(timeout);
    }

    @Override
    public void close() {
        producer.close();
    }

    @Override
    public void close(Duration timeout) {
        producer.close(timeout);
    }
}
