package io.snowstamp.testing;

import io.snowstamp.recovery.TopicReader;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
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
 * @param notable  every gap of a second or more that ended in the window, in the order read
 */
public record OutputStalls(Map<Integer, Gap> longest, List<Gap> notable) {
    private static final long NOTABLE_MILLIS = 1_000;

    /** Partition {@code partition} got no record after {@code fromMillis} until {@code toMillis} (wall clock). */
    public record Gap(int partition, long fromMillis, long toMillis) {
        public long millis() {
            return toMillis - fromMillis;
        }
    }

    /**
     * Reads {@code topic} and keeps, per partition, the longest gap between consecutive records that
     * ends within [fromMillis, toMillis] (a gap that began before the window counts: a fault right
     * at its start must not hide).
     */
    public static OutputStalls measure(String bootstrapServers, String topic, long fromMillis, long toMillis) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<Integer, Long> previous = new HashMap<>();
        Map<Integer, Gap> longest = new HashMap<>();
        List<Gap> notable = new ArrayList<>();
        TopicReader.readToEnd(p, topic, Duration.ofSeconds(60), record -> {
            long at = record.timestamp();
            if (at > toMillis) {
                return;
            }
            Long before = previous.put(record.partition(), at);
            if (before == null || at < fromMillis) {
                return;
            }
            Gap gap = new Gap(record.partition(), before, at);
            Gap best = longest.get(record.partition());
            if (best == null || gap.millis() > best.millis()) {
                longest.put(record.partition(), gap);
            }
            if (gap.millis() >= NOTABLE_MILLIS) {
                notable.add(gap);
            }
        });
        notable.sort(Comparator.comparingLong(Gap::fromMillis));
        return new OutputStalls(Map.copyOf(longest), List.copyOf(notable));
    }

    /** The longest gap of all partitions. */
    public Gap worst() {
        return longest.values().stream().max(Comparator.comparingLong(Gap::millis))
                .orElseThrow(() -> new AssertionError("no partition had two records in the window"));
    }

    /** {@code longest output stall 6.9 s (partition 3, +10.2 s to +17.1 s); per partition: 0=..., 1=...}, times from {@code originMillis}. */
    public String describe(long originMillis) {
        Gap worst = worst();
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "longest output stall %.1f s (partition %d, +%.1f s to +%.1f s);"
                + " per partition:", worst.millis() / 1e3, worst.partition(), (worst.fromMillis() - originMillis) / 1e3,
                (worst.toMillis() - originMillis) / 1e3));
        longest.values().stream().sorted(Comparator.comparingInt(Gap::partition))
                .forEach(gap -> text.append(String.format(Locale.ROOT, " %d=%.1fs", gap.partition(), gap.millis() / 1e3)));
        text.append("; stalls of 1 s or more:");
        notable.forEach(gap -> text.append(String.format(Locale.ROOT, " p%d +%.1f..+%.1f s (%.1f s)", gap.partition(),
                (gap.fromMillis() - originMillis) / 1e3, (gap.toMillis() - originMillis) / 1e3, gap.millis() / 1e3)));
        return text.toString();
    }
}
