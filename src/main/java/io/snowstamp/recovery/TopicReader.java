package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * Reads a whole topic (every partition, from the beginning) up to the end offsets snapshotted
 * when the read starts, with no consumer group. Completion is judged by position, not by record
 * count, so compaction gaps and transaction markers cannot make it wait forever or stop early.
 * With {@code isolation.level=read_committed} the snapshotted end is the last stable offset.
 */
public final class TopicReader {
    private TopicReader() {
    }

    /** Partitions of a topic, sorted; empty if the topic does not exist. */
    public static List<TopicPartition> partitions(KafkaConsumer<byte[], byte[]> consumer, String topic, Duration timeout) {
        Map<String, List<PartitionInfo>> topics = consumer.listTopics(timeout);
        List<PartitionInfo> infos = topics.get(topic);
        List<TopicPartition> result = new ArrayList<>();
        if (infos != null) {
            infos.forEach(info -> result.add(new TopicPartition(topic, info.partition())));
        }
        result.sort(java.util.Comparator.comparingInt(TopicPartition::partition));
        return result;
    }

    /**
     * Delivers every record of {@code topic} below the snapshotted end offsets to {@code sink}, in
     * offset order within each partition.
     *
     * @param timeout overall bound: failing to reach the end in time is an error, never a short read
     * @return the number of records delivered
     * @throws SnowstampException if the topic does not exist or the end is not reached in time
     */
    public static long readToEnd(Properties consumerProps, String topic, Duration timeout,
                                 Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long delivered = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            List<TopicPartition> partitions = partitions(consumer, topic, timeout);
            if (partitions.isEmpty()) {
                throw new SnowstampException("topic " + topic + " does not exist");
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(partitions, timeout));
            while (!reachedEnd(consumer, end)) {
                if (System.nanoTime() > deadline) {
                    throw new SnowstampException("reading " + topic + " did not reach its end offsets " + end
                            + " within " + timeout.toSeconds() + " s");
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    if (record.offset() < end.get(new TopicPartition(record.topic(), record.partition()))) {
                        sink.accept(record);
                        delivered++;
                    }
                }
            }
        }
        return delivered;
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> entry : end.entrySet()) {
            if (consumer.position(entry.getKey()) < entry.getValue()) {
                return false;
            }
        }
        return true;
    }
}
