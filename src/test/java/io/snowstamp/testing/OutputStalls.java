package io.snowstamp.testing;

import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * How long each partition of a stamped topic went without a new record, as a {@code read_committed}
 * consumer sees it: a background consumer tails the topic from its end and notes when records of
 * each partition arrive. Under a steady input load, a gap between two arrivals is time in which the
 * partition's records were not stamped, or not visible yet (under exactly-once, a dead instance's
 * open transaction hides everything after it until the broker aborts it): a stall.
 */
public final class OutputStalls implements AutoCloseable {
    private static final long NOTABLE_MILLIS = 1_000;

    /** Partition {@code partition} got no record after {@code fromMillis} until {@code toMillis} (wall clock). */
    public record Gap(int partition, long fromMillis, long toMillis) {
        public long millis() {
            return toMillis - fromMillis;
        }
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Thread thread;
    private final Map<Integer, List<Long>> arrivals = new HashMap<>();
    private volatile boolean stopping;

    private OutputStalls(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        this.consumer = consumer;
        this.thread = new Thread(this::run, "output-stalls-" + topic);
        thread.setDaemon(true);
    }

    /** Starts tailing {@code topic} from its current end. */
    public static OutputStalls watch(String bootstrapServers, String topic) {
        return watch(bootstrapServers, topic, Map.of());
    }

    /**
     * Starts tailing {@code topic} from its current end with {@code settings} over the consumer's own
     * (on a cluster: a short {@code metadata.max.age.ms}, so that the watcher follows a leader that moved
     * away from a frozen broker at once instead of waiting for its own request to time out).
     */
    public static OutputStalls watch(String bootstrapServers, String topic, Map<String, String> settings) {
        java.util.Properties props = StampedRecords.committedReader(bootstrapServers);
        props.putAll(settings);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(info -> new TopicPartition(topic, info.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToEnd(partitions);
        partitions.forEach(consumer::position);     // resolve the end now, not at the first poll
        OutputStalls stalls = new OutputStalls(consumer, topic);
        stalls.thread.start();
        return stalls;
    }

    private void run() {
        try {
            while (!stopping) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(50));
                long now = System.currentTimeMillis();
                synchronized (arrivals) {
                    records.partitions().forEach(tp -> arrivals.computeIfAbsent(tp.partition(), p -> new ArrayList<>()).add(now));
                }
            }
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    /** Stops tailing; waits (bounded) for the consumer to close. */
    @Override
    public void close() throws InterruptedException {
        stopping = true;
        thread.join(TimeUnit.SECONDS.toMillis(10));
    }

    /** What was seen: per partition the longest gap ending within [fromMillis, toMillis], and every gap of a second or more. */
    public Report report(long fromMillis, long toMillis) {
        Map<Integer, Gap> longest = new HashMap<>();
        List<Gap> notable = new ArrayList<>();
        synchronized (arrivals) {
            arrivals.forEach((partition, times) -> {
                for (int i = 1; i < times.size(); i++) {
                    Gap gap = new Gap(partition, times.get(i - 1), times.get(i));
                    if (gap.toMillis() < fromMillis || gap.toMillis() > toMillis) {
                        continue;
                    }
                    if (!longest.containsKey(partition) || gap.millis() > longest.get(partition).millis()) {
                        longest.put(partition, gap);
                    }
                    if (gap.millis() >= NOTABLE_MILLIS) {
                        notable.add(gap);
                    }
                }
            });
        }
        notable.sort(Comparator.comparingLong(Gap::fromMillis));
        return new Report(Map.copyOf(longest), List.copyOf(notable));
    }

    /**
     * Whether every partition got a record within the last {@code millis} milliseconds (wall clock):
     * records flow in each of them.
     */
    public boolean everyPartitionWithin(long millis, int partitions) {
        return everyPartitionSince(System.currentTimeMillis() - millis, partitions);
    }

    /** True when each of {@code partitions} partitions got a record at or after {@code since} (wall clock, ms). */
    public boolean everyPartitionSince(long since, int partitions) {
        synchronized (arrivals) {
            return arrivals.size() >= partitions
                    && arrivals.values().stream().allMatch(times -> times.get(times.size() - 1) >= since);
        }
    }

    /**
     * When the stall under way at {@code millis} ended: the latest first arrival after {@code millis}
     * over the partitions ({@code millis} itself when every partition got a record right then). A
     * partition with no arrival after it yet counts as ending now.
     */
    public long stallEndAt(long millis) {
        long end = millis;
        synchronized (arrivals) {
            for (List<Long> times : arrivals.values()) {
                long first = times.stream().filter(t -> t > millis).findFirst().orElse(System.currentTimeMillis());
                end = Math.max(end, first);
            }
        }
        return end;
    }

    /** How many polls brought records of {@code partition} between {@code fromMillis} and {@code toMillis} (wall clock, inclusive). */
    public long arrivals(int partition, long fromMillis, long toMillis) {
        synchronized (arrivals) {
            return arrivals.getOrDefault(partition, List.of()).stream().filter(t -> t >= fromMillis && t <= toMillis).count();
        }
    }

    /**
     * How long after {@code faultMillis} the last partition got its first record: every partition
     * was being stamped again (and visible) that many milliseconds after the fault. -1 if some
     * partition got none after it.
     */
    public long everyPartitionAfter(long faultMillis) {
        long slowest = 0;
        synchronized (arrivals) {
            for (List<Long> times : arrivals.values()) {
                long first = times.stream().filter(t -> t >= faultMillis).findFirst().orElse(-1L);
                if (first < 0) {
                    return -1;
                }
                slowest = Math.max(slowest, first - faultMillis);
            }
        }
        return slowest;
    }

    /**
     * @param longest the longest gap of every partition that had at least two arrivals in the window
     * @param notable every gap of a second or more that ended in the window, by start
     */
    public record Report(Map<Integer, Gap> longest, List<Gap> notable) {
        /** The longest gap of all partitions. */
        public Gap worst() {
            return longest.values().stream().max(Comparator.comparingLong(Gap::millis))
                    .orElseThrow(() -> new AssertionError("no partition had two arrivals in the window"));
        }

        /** {@code longest output stall 6.9 s (partition 3, +10.2 s to +17.1 s); per partition: ...}, times from {@code originMillis}. */
        public String describe(long originMillis) {
            Gap worst = worst();
            StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "longest output stall %.1f s (partition %d,"
                    + " +%.1f s to +%.1f s); per partition:", worst.millis() / 1e3, worst.partition(),
                    (worst.fromMillis() - originMillis) / 1e3, (worst.toMillis() - originMillis) / 1e3));
            longest.values().stream().sorted(Comparator.comparingInt(Gap::partition))
                    .forEach(gap -> text.append(String.format(Locale.ROOT, " %d=%.1fs", gap.partition(), gap.millis() / 1e3)));
            text.append("; stalls of 1 s or more:");
            notable.forEach(gap -> text.append(String.format(Locale.ROOT, " p%d +%.1f..+%.1f s (%.1f s)", gap.partition(),
                    (gap.fromMillis() - originMillis) / 1e3, (gap.toMillis() - originMillis) / 1e3, gap.millis() / 1e3)));
            return text.toString();
        }
    }
}
