package io.snowstamp.runtime;

import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.stream.ProducerFlushes;
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
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;

/**
 * The producer Kafka Streams writes with, unchanged but for two things. In snowflake mode, when the broker acknowledges
 * a state record, the task that wrote it hears so ({@link WriteAcks}) — the acknowledgement its write-ahead reservations
 * wait for. The same producer keeps the changelog's order: a task's writes are never split over two producers, so the
 * newest record of a partition is always its newest state. Under exactly-once, a commit whose offsets Kafka Streams left
 * empty carries the committed offsets of the input partitions it wrote for, so that the group coordinator checks the
 * thread's generation ({@link GenerationCheck}). Under at-least-once, its flushes and failed sends are told to the tasks of
 * its stream thread ({@link ProducerFlushes}): the proof that records set aside and stamped are durable.
 */
final class AcknowledgingProducer implements Producer<byte[], byte[]> {
    private final Producer<byte[], byte[]> producer;
    /** Null: no task waits for acknowledgements (sequence mode). */
    private final WriteAcks acks;
    /** Null: not transactional. */
    private final GenerationCheck generation;
    /** At-least-once: what the tasks' records set aside learn of this producer's flushes; null when transactional. */
    private final ProducerFlushes flushes;
    /** The partition numbers the open transaction wrote to; on the stream thread, the producer's only caller. */
    private final BitSet written = new BitSet();
    /** Records sent in the open transaction (the fault tests' freeze before a flush). */
    private long sends;
    private final CommitFreezeHook freeze = CommitFreezeHook.fromSystemProperties();
    /** How long the generation check may fetch committed offsets: half the transaction timeout. */
    private final Duration fetchTimeout;

    AcknowledgingProducer(Producer<byte[], byte[]> producer, WriteAcks acks, GenerationCheck generation, Duration transactionTimeout) {
        this.producer = producer;
        this.acks = acks;
        this.generation = generation;
        this.flushes = generation == null ? new ProducerFlushes(this::flush) : null;
        this.fetchTimeout = transactionTimeout.dividedBy(2);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
        if (generation != null && record.partition() != null) {
            written.set(record.partition());
        }
        sends++;
        LongConsumer acknowledged = acks == null ? null : acks.onSend(record.topic(), record.partition(), record.key(), record.value());
        if (acknowledged == null && flushes == null) {
            return producer.send(record, callback);
        }
        if (flushes != null) {
            flushes.sending();
        }
        try {
            return producer.send(record, (metadata, error) -> {
                if (error == null) {
                    if (acknowledged != null) {
                        acknowledged.accept(metadata.offset());
                    }
                } else if (flushes != null) {
                    flushes.failed();
                }
                if (callback != null) {
                    callback.onCompletion(metadata, error);
                }
            });
        } catch (RuntimeException e) {
            if (flushes != null) {
                flushes.failed();
            }
            throw e;
        }
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
        written.clear();
        sends = 0;
        producer.beginTransaction();
    }

    @Override
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
        Map<TopicPartition, OffsetAndMetadata> sent = generation == null ? offsets : generation.offsetsToSend(offsets, written, fetchTimeout);
        producer.sendOffsetsToTransaction(sent, groupMetadata);
        freeze.offsetsAccepted(sent);
    }

    @Override
    public void commitTransaction() {
        producer.commitTransaction();
        written.clear();
        sends = 0;
    }

    @Override
    public void abortTransaction() {
        producer.abortTransaction();
        written.clear();
        sends = 0;
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
        freeze.beforeFlush(sends);
        producer.flush();
        if (flushes != null) {
            flushes.flushed();
        }
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
