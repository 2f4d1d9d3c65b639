package io.snowstamp.resume;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * Reads ranges of one output partition at a time with {@code read_uncommitted} — records of open
 * and aborted transactions count; transaction markers are skipped by the consumer. The part the
 * snowflake {@link TailGuard} and the sequence tail scan share. One consumer, no group; its owner
 * serializes the calls.
 */
public final class PartitionTail implements AutoCloseable {
    /** A partition's offsets when it was opened. */
    public record Bounds(long begin, long end) {
    }

    private final String topic;
    private final Duration timeout;
    private final KafkaConsumer<byte[], byte[]> consumer;
    /** A read of the topic succeeded once: READ access is proven (see {@link #open}). */
    private boolean readProven;

    /** @param clientProps connection and security settings of the cluster */
    public PartitionTail(Properties clientProps, String topic, String clientId, Duration timeout) {
        Properties props = new Properties();
        props.putAll(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        // the reads stop at a known end offset: never let the broker hold a fetch open waiting for more
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.topic = topic;
        this.timeout = timeout;
    }

    public String topic() {
        return topic;
    }

    /**
     * Assigns {@code partition} (until {@link #release}) and returns its offsets. When nothing is to
     * be read from {@code from} on, it still proves that the topic may be read: a missing READ ACL
     * must stop the task now, not at the first restart after records exist. ACLs are per topic, so
     * once is enough: a 50 ms poll per empty partition made a first start on 64 partitions seconds slower.
     */
    public Bounds open(int partition, long from) {
        TopicPartition tp = new TopicPartition(topic, partition);
        consumer.assign(List.of(tp));
        long begin = consumer.beginningOffsets(List.of(tp), timeout).get(tp);
        long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
        if (!readProven && Math.max(begin, from) >= end) {
            consumer.seek(tp, end);
            consumer.poll(Duration.ofMillis(50));
            readProven = true;
        }
        return new Bounds(begin, end);
    }

    /**
     * Hands every record at offsets {@code from..to-1} of the opened partition to {@code sink}.
     *
     * @return how many records were read
     * @throws IllegalStateException when {@code deadlineNanos} (a {@link System#nanoTime()}) passes first
     */
    public long read(int partition, long from, long to, long deadlineNanos, Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        TopicPartition tp = new TopicPartition(topic, partition);
        consumer.seek(tp, from);
        long read = 0;
        while (consumer.position(tp) < to) {
            if (System.nanoTime() > deadlineNanos) {
                throw new IllegalStateException("read " + read + " of " + (to - from) + " records at offsets " + from + ".." + to
                        + " in " + timeout.toSeconds() + " s");
            }
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                if (record.offset() >= to) {
                    break;
                }
                read++;
                sink.accept(record);
            }
            readProven = true;
        }
        return read;
    }

    /** The end offset of {@code partition} (assigned while asking, or the consumer warns that it cannot keep the high watermark). */
    public Long endOffset(int partition) {
        TopicPartition tp = new TopicPartition(topic, partition);
        try {
            consumer.assign(List.of(tp));
            return consumer.endOffsets(List.of(tp), timeout).get(tp);
        } finally {
            release();
        }
    }

    /** Gives up the partition opened last. */
    public void release() {
        consumer.unsubscribe();
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }
}
