package io.snowstamp.resume;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
    /**
     * Beginning offsets of every partition of the topic, read in ONE request for all of them, and
     * when: at 1,024 partitions a request per task start was 1,024 sequential round trips. A cached
     * beginning is never above the real one for long (it only grows: retention, deleted records), and
     * a read below it starts at the real beginning ({@code auto.offset.reset=earliest}), so a stale
     * value costs at most one more window of the backward scan, never a skipped record. Refreshed
     * after {@link #BEGINNINGS_TTL_NANOS} and when a partition is missing.
     */
    private Map<Integer, Long> beginnings = Map.of();
    private long beginningsReadAt;
    private static final long BEGINNINGS_TTL_NANOS = Duration.ofMinutes(1).toNanos();

    /** @param clientProps connection and security settings of the cluster */
    public PartitionTail(Properties clientProps, String topic, String clientId, Duration timeout) {
        Properties props = new Properties();
        props.putAll(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // a seek below the log start (a cached beginning offset, see beginnings) reads from the real start
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
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
        long begin = beginning(partition);
        TopicPartition tp = new TopicPartition(topic, partition);
        consumer.assign(List.of(tp));
        // the end offset is read for this task, now: it is the safety read, taken after the partition became this task's
        long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
        if (!readProven && Math.max(begin, from) >= end) {
            consumer.seek(tp, end);
            consumer.poll(Duration.ofMillis(50));
            readProven = true;
        }
        return new Bounds(begin, end);
    }

    private long beginning(int partition) {
        Long cached = beginnings.get(partition);
        if (cached == null || System.nanoTime() - beginningsReadAt > BEGINNINGS_TTL_NANOS) {
            List<TopicPartition> all = consumer.partitionsFor(topic, timeout).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            Map<Integer, Long> read = new HashMap<>();
            consumer.assign(all);       // asking for unassigned partitions logs a warning per partition
            consumer.beginningOffsets(all, timeout).forEach((tp, offset) -> read.put(tp.partition(), offset));
            beginnings = read;
            beginningsReadAt = System.nanoTime();
            cached = read.get(partition);
            if (cached == null) {
                throw new IllegalStateException("partition " + partition + " of " + topic + " does not exist");
            }
        }
        return cached;
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
