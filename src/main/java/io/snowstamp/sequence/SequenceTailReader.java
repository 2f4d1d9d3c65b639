package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.stream.Names;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * {@link SequenceTail} on a Kafka consumer: no group, {@code read_uncommitted}, one consumer shared
 * by the stream threads of an instance (calls are serialized). Records without both
 * {@code snowstamp-tag} and a decimal {@code snowstamp-id} (snowflake output, foreign records) are
 * skipped.
 */
public final class SequenceTailReader implements SequenceTail, AutoCloseable {
    private final String topic;
    private final Duration timeout;
    private final KafkaConsumer<byte[], byte[]> consumer;

    /** @param clientProps connection and security settings of the cluster */
    public SequenceTailReader(Properties clientProps, String topic, Duration timeout) {
        Properties props = new Properties();
        props.putAll(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "snowstamp-sequence-tail-" + topic);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        // the reads stop at a known end offset: never let the broker hold a fetch open waiting for more
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.topic = topic;
        this.timeout = timeout;
    }

    @Override
    public synchronized Scan scan(int partition, long fromOffset) {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        TopicPartition tp = new TopicPartition(topic, partition);
        try {
            consumer.assign(List.of(tp));
            long begin = consumer.beginningOffsets(List.of(tp), timeout).get(tp);
            long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
            long from = Math.max(begin, fromOffset);
            Map<String, Long> highest = new HashMap<>();
            long scanned = 0;
            if (from >= end) {
                // nothing to read, but prove we may: a missing READ ACL must stop the task now, not
                // at the first restart after records exist
                consumer.seek(tp, end);
                consumer.poll(Duration.ofMillis(50));
            } else {
                consumer.seek(tp, from);
                while (consumer.position(tp) < end) {
                    if (System.nanoTime() > deadline) {
                        throw failed(partition, "read " + scanned + " of " + (end - from) + " records at offsets " + from + ".."
                                + end + " in " + timeout.toSeconds() + " s", null);
                    }
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                        if (record.offset() >= end) {
                            break;
                        }
                        scanned++;
                        note(record, highest);
                    }
                }
            }
            return new Scan(highest, scanned, from, end, (System.nanoTime() - started) / 1_000_000);
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw failed(partition, e.getMessage(), e);
        } finally {
            consumer.unsubscribe();
        }
    }

    @Override
    public synchronized long endOffset(int partition) {
        TopicPartition tp = new TopicPartition(topic, partition);
        try {
            // assigned while asking, or the consumer warns that it cannot keep the answer's high watermark
            consumer.assign(List.of(tp));
            Long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
            if (end == null) {
                throw failed(partition, "no end offset", null);
            }
            return end;
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw failed(partition, e.getMessage(), e);
        } finally {
            consumer.unsubscribe();
        }
    }

    private static void note(ConsumerRecord<byte[], byte[]> record, Map<String, Long> highest) {
        Header tag = record.headers().lastHeader(SequenceNames.TAG_HEADER);
        Header id = record.headers().lastHeader(Names.ID_HEADER);
        if (tag == null || tag.value() == null || id == null || id.value() == null) {
            return;
        }
        long number;
        try {
            number = Long.parseLong(new String(id.value(), StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return;
        }
        if (number >= 0) {
            highest.merge(new String(tag.value(), StandardCharsets.UTF_8), number, Math::max);
        }
    }

    private SnowstampException failed(int partition, String reason, RuntimeException cause) {
        return new SnowstampException("sequence tail scan cannot read output partition " + topic + "-" + partition + " (" + reason
                + "); the task will not start without knowing the numbers already issued"
                + " (raise recovery.tail-guard-timeout, or check the principal may read " + topic + ")", cause);
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }
}
