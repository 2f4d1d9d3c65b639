package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import io.snowstamp.state.StateNames;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Replays the worker-state changelog {@code <application.id>-worker-state-changelog} with a plain
 * consumer: no group, {@code read_committed} (the stamper writes it in transactions), from the
 * beginning of each partition up to the end offset snapshotted when the read starts. Completion is
 * judged by position, not by count, so compaction gaps and transaction markers cannot make it stop
 * early or wait forever. Partitions are read one after the other, each in offset order.
 *
 * <p>Key: the input partition as a 4-byte big-endian int (Kafka's {@code IntegerSerializer});
 * value: {@link WorkerStateSerde}. A record that cannot be decoded is an error naming its offset:
 * state that cannot be read is never taken as "no state".
 */
public final class ChangelogReader {
    private static final WorkerStateSerde SERDE = new WorkerStateSerde();

    private ChangelogReader() {
    }

    /**
     * Delivers every record below the snapshotted end offsets, partition by partition.
     *
     * @param consumerProps connection settings; the read is forced to read_committed without a group
     * @param partition     only this changelog partition, or null for all
     * @param timeout       overall bound: not reaching the end in time is an error, never a short read
     * @return the number of records delivered
     * @throws ChangelogUnavailableException (MISSING) if the topic does not exist
     */
    public static long read(Properties consumerProps, String applicationId, Integer partition, Duration timeout,
                            Consumer<ChangelogEntry> sink) {
        String topic = StateNames.changelogTopic(applicationId);
        long deadline = System.nanoTime() + timeout.toNanos();
        long delivered = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props(consumerProps),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = TopicReader.partitions(consumer, topic, timeout);
            if (partitions.isEmpty()) {
                throw new ChangelogUnavailableException(topic, applicationId, ChangelogUnavailableException.Reason.MISSING);
            }
            if (partition != null) {
                if (partition < 0 || partition >= partitions.size()) {
                    throw new SnowstampException("--partition=" + partition + " is invalid: accepted 0.." + (partitions.size() - 1)
                            + " (changelog topic " + topic + " has " + partitions.size() + " partitions)");
                }
                partitions = List.of(new TopicPartition(topic, partition));
            }
            // all assigned (so the read_committed end offsets update their state) but paused: read one at a time
            consumer.assign(partitions);
            consumer.pause(partitions);
            // one snapshot for every partition, taken before reading any of them
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(partitions, timeout);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
            for (TopicPartition tp : partitions) {
                delivered += readPartition(consumer, tp, begin.get(tp), end.get(tp), deadline, timeout, sink);
            }
        }
        return delivered;
    }

    /**
     * The newest state of every key (input partition); a tombstone removes the key.
     *
     * @throws ChangelogUnavailableException MISSING if the topic does not exist, EMPTY if it holds no state
     */
    public static Map<Integer, ChangelogEntry> latest(Properties consumerProps, String applicationId, Duration timeout) {
        Map<Integer, ChangelogEntry> latest = new TreeMap<>();
        read(consumerProps, applicationId, null, timeout, entry -> {
            if (entry.state() == null) {
                latest.remove(entry.key());
            } else {
                latest.put(entry.key(), entry);
            }
        });
        if (latest.isEmpty()) {
            throw new ChangelogUnavailableException(StateNames.changelogTopic(applicationId), applicationId,
                    ChangelogUnavailableException.Reason.EMPTY);
        }
        return latest;
    }

    /** Like {@link #latest} but a missing or empty changelog is simply no state. */
    public static Map<Integer, WorkerState> latestOrNone(Properties consumerProps, String applicationId, Duration timeout) {
        Map<Integer, WorkerState> states = new TreeMap<>();
        try {
            latest(consumerProps, applicationId, timeout).forEach((key, entry) -> states.put(key, entry.state()));
        } catch (ChangelogUnavailableException e) {
            // nothing stored yet: every partition starts from no state
        }
        return states;
    }

    private static long readPartition(KafkaConsumer<byte[], byte[]> consumer, TopicPartition tp, long begin, long end,
                                      long deadline, Duration timeout, Consumer<ChangelogEntry> sink) {
        if (begin >= end) {
            return 0;
        }
        consumer.seek(tp, begin);
        consumer.resume(List.of(tp));
        long delivered = 0;
        while (consumer.position(tp) < end) {
            if (System.nanoTime() > deadline) {
                throw new SnowstampException("reading " + tp + " did not reach its end offset " + end + " within "
                        + timeout.toSeconds() + " s (at offset " + consumer.position(tp) + "; raise --timeout)");
            }
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                if (record.offset() < end) {
                    sink.accept(decode(record));
                    delivered++;
                }
            }
        }
        consumer.pause(List.of(tp));
        return delivered;
    }

    /** Decodes one changelog record; anything unreadable is an error naming where it is. */
    static ChangelogEntry decode(ConsumerRecord<byte[], byte[]> record) {
        String where = "changelog record " + record.topic() + "-" + record.partition() + "@" + record.offset();
        byte[] key = record.key();
        if (key == null || key.length != 4) {
            throw new SnowstampException(where + " has a key of " + (key == null ? "null" : key.length + " bytes")
                    + ": expected the partition number as a 4-byte int");
        }
        WorkerState state;
        try {
            state = SERDE.deserialize(record.topic(), record.value());
        } catch (SerializationException e) {
            throw new SnowstampException(where + ": " + e.getMessage(), e);
        }
        return new ChangelogEntry(record.partition(), record.offset(), record.timestamp(), ByteBuffer.wrap(key).getInt(), state);
    }

    private static Properties props(Properties consumerProps) {
        Properties props = new Properties();
        props.putAll(consumerProps);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // the read stops at a known end offset: never let the broker hold a fetch open waiting for more
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        props.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        props.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        return props;
    }
}
