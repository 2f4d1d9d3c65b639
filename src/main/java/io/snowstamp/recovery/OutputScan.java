package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.IdLayout;
import io.snowstamp.resume.TailGuard;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The highest ID of each partition's worker in an output topic, for {@code recover}. By default
 * the tail of each partition is read exactly as the stamper's {@link TailGuard} does (backwards in
 * growing windows until an ID of the worker shows up); {@code full} reads every partition from its
 * beginning instead. Both read {@code read_uncommitted}, up to the end offset taken when the scan
 * starts: records of open and aborted transactions count, since a resume point may be too high
 * but never too low.
 */
public final class OutputScan {
    private OutputScan() {
    }

    /**
     * @param clientProps  connection and security settings
     * @param workerOffset partition p is scanned for worker {@code workerOffset + p}
     * @param tailTimeout  bound per partition for the tail read
     * @param fullTimeout  overall bound for the full read
     * @return highest ID per partition, -1 where the partition holds none of its worker's IDs
     */
    public static Map<Integer, Long> highest(Properties clientProps, String topic, int partitions, IdLayout layout,
                                             long datacenter, long workerOffset, boolean full,
                                             Duration tailTimeout, Duration fullTimeout) {
        Map<Integer, Long> highest = new TreeMap<>();
        if (!full) {
            try (TailGuard guard = new TailGuard(clientProps, topic, layout, tailTimeout)) {
                for (int p = 0; p < partitions; p++) {
                    highest.put(p, guard.highestIssued(p, datacenter, workerOffset + p).highestId());
                }
            }
            return highest;
        }
        long deadline = System.nanoTime() + fullTimeout.toNanos();
        Properties props = new Properties();
        props.putAll(clientProps);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        props.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        props.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            for (int p = 0; p < partitions; p++) {
                highest.put(p, scanPartition(consumer, new TopicPartition(topic, p), layout, datacenter, workerOffset + p,
                        deadline, fullTimeout));
            }
        }
        return highest;
    }

    private static long scanPartition(KafkaConsumer<byte[], byte[]> consumer, TopicPartition tp, IdLayout layout,
                                      long datacenter, long worker, long deadline, Duration timeout) {
        consumer.assign(List.of(tp));
        long begin = consumer.beginningOffsets(List.of(tp), timeout).get(tp);
        long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
        consumer.seek(tp, begin);
        long highest = -1;
        while (consumer.position(tp) < end) {
            if (System.nanoTime() > deadline) {
                throw new SnowstampException("the full scan of " + tp + " did not reach its end offset " + end + " within "
                        + timeout.toSeconds() + " s (at offset " + consumer.position(tp) + "; raise --timeout)");
            }
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                if (record.offset() < end) {
                    highest = Math.max(highest, TailGuard.ownId(record, layout, datacenter, worker));
                }
            }
        }
        return highest;
    }
}
