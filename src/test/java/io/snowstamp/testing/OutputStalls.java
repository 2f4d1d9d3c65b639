package io.snowstamp.testing;

import io.snowstamp.recovery.TopicReader;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * How long each partition of a stamped topic went without a new record, as a consumer sees it
 * (read_committed), from the broker's append times of an output topic made by
 * {@link Stamper.Topics#createTimed}. Under a steady input load, a gap between two consecutive
 * records of a partition is time in which that partition was not stamped: a stall.
 *
 * @param longest the longest gap of every partition that had at least two records in the window
 */
public record OutputStalls(Map<Integer, Gap> longest) {
    /** Partition {@code partition} got no record after {@code fromMillis} until {@code toMillis} (wall clock). */
    public record Gap(int partition, long fromMillis, long toMillis) {
        public long millis() {
            return toMillis - fromMillis;
        }
    }

    /** Reads {@code topic} and keeps, per partition, the longest gap between records appended within [fromMillis, toMillis]. */
    public static OutputStalls measure(String bootstrapServers, String topic, long fromMillis, long toMillis) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<Integer, Long> previous = new HashMap<>();
        Map<Integer, Gap> longest = new HashMap<>();
        TopicReader.readToEnd(p, topic, Duration.ofSeconds(60), record -> {
            long at = record.timestamp();
            if (at < fromMillis || at > toMillis) {
                return;
            }
            Long before = previous.put(record.partition(), at);
            Gap best = longest.get(record.partition());
            if (before != null && (best == null || at - before > best.millis())) {
                longest.put(record.partition(), new Gap(record.partition(), before, at));
            }
        });
        return new OutputStalls(Map.copyOf(longest));
    }

    /** The longest gap of all partitions. */
    public Gap worst() {
        return longest.values().stream().max(java.util.Comparator.comparingLong(Gap::millis))
                .orElseThrow(() -> new AssertionError("no partition had two records in the window"));
    }

    /** {@code longest output stall 6.9 s (partition 3, +10.2 s to +17.1 s); per partition: 0=..., 1=...}, times from {@code originMillis}. */
    public String describe(long originMillis) {
        Gap worst = worst();
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "longest output stall %.1f s (partition %d, +%.1f s to +%.1f s);"
                + " per partition:", worst.millis() / 1e3, worst.partition(), (worst.fromMillis() - originMillis) / 1e3,
                (worst.toMillis() - originMillis) / 1e3));
        longest.values().stream().sorted(java.util.Comparator.comparingInt(Gap::partition))
                .forEach(gap -> text.append(String.format(Locale.ROOT, " %d=%.1fs", gap.partition(), gap.millis() / 1e3)));
        return text.toString();
    }
}
