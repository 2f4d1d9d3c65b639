package io.snowstamp.resume;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Reads ranges of output partitions with {@code read_uncommitted} — records of open and aborted
 * transactions count; transaction markers are skipped by the consumer — or, made so, with
 * {@code read_committed} (its end is then the last stable offset, and the consumer's position moves past
 * the aborted records and markers it does not hand out, so a read still ends) — one partition at a time
 * ({@link #open}, {@link #read}) or many at once ({@link #openAll}, {@link #readAll}: one
 * end-offsets request and shared fetches for all of them). The part the snowflake {@link TailGuard}
 * and the sequence tail scan share. One consumer, no group; its owner serializes the calls.
 */
public final class PartitionTail implements AutoCloseable {
    /** The longest its consumer's close takes: part of a clean stop's worst case (the Kubernetes grace period counts it). */
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    /** A partition's offsets when it was opened. */
    public record Bounds(long begin, long end) {
    }

    /** Offsets {@code from} (inclusive) to {@code to} (exclusive) of one partition. */
    public record Range(long from, long to) {
    }

    private final String topic;
    private final Duration timeout;
    private final org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer;
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
    /** End-offset requests sent, for tests and logs: a batch of partitions costs one, not one per partition. */
    private final AtomicLong endOffsetRequests = new AtomicLong();

    /** @param clientProps connection and security settings of the cluster */
    public PartitionTail(Properties clientProps, String topic, String clientId, Duration timeout) {
        this(clientProps, topic, clientId, timeout, false);
    }

    /** @param committed read {@code read_committed}: records of aborted and open transactions are not read */
    public PartitionTail(Properties clientProps, String topic, String clientId, Duration timeout, boolean committed) {
        this(new KafkaConsumer<>(consumerProps(clientProps, clientId, committed), new ByteArrayDeserializer(),
                new ByteArrayDeserializer()), topic, timeout);
    }

    private static Properties consumerProps(Properties clientProps, String clientId, boolean committed) {
        Properties props = new Properties();
        props.putAll(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, committed ? "read_committed" : "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // a seek below the log start (a cached beginning offset, see beginnings) reads from the real start
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        // the reads stop at a known end offset: never let the broker hold a fetch open waiting for more
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        return props;
    }

    /** On a consumer the caller made (tests: a fake of the output partition), of either isolation; this reader closes it. */
    public PartitionTail(org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer, String topic, Duration timeout) {
        this.consumer = consumer;
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
        long end = endOffsets(List.of(tp)).get(tp);
        if (Math.max(begin, from) >= end) {
            proveReadable(tp, end);
        }
        return new Bounds(begin, end);
    }

    /**
     * Assigns every partition of {@code partitions} (until {@link #release}) and returns their
     * offsets, the end offsets read in ONE request for all of them (the safety read of each: the
     * caller asks only after every one of them became its own). Like {@link #open}, proves once that
     * the topic may be read when none has anything to read.
     */
    public Map<Integer, Bounds> openAll(Collection<Integer> partitions) {
        Map<Integer, Long> begins = new HashMap<>();
        for (int partition : partitions) {
            begins.put(partition, beginning(partition));    // before assign: a refresh assigns the whole topic
        }
        List<TopicPartition> tps = partitions.stream().map(partition -> new TopicPartition(topic, partition)).toList();
        consumer.assign(tps);
        Map<TopicPartition, Long> ends = endOffsets(tps);
        Map<Integer, Bounds> bounds = new TreeMap<>();
        for (TopicPartition tp : tps) {
            bounds.put(tp.partition(), new Bounds(begins.get(tp.partition()), ends.get(tp)));
        }
        if (!tps.isEmpty() && bounds.values().stream().allMatch(b -> b.begin() >= b.end())) {
            proveReadable(tps.get(0), ends.get(tps.get(0)));
        }
        return bounds;
    }

    private Map<TopicPartition, Long> endOffsets(List<TopicPartition> tps) {
        endOffsetRequests.incrementAndGet();
        return consumer.endOffsets(tps, timeout);
    }

    /** One empty read at {@code end} of an assigned partition, unless a read of the topic succeeded before. */
    private void proveReadable(TopicPartition tp, long end) {
        if (!readProven) {
            consumer.seek(tp, end);
            consumer.poll(Duration.ofMillis(50));
            readProven = true;
        }
    }

    /**
     * The log start of the opened {@code partition}, read now (not the cached {@link #beginning}): where a caller decides
     * from it whether records it needed were deleted, a stale value would hide the deletion — the read below it starts at
     * the real log start ({@code auto.offset.reset=earliest}) without a word.
     */
    public long beginningNow(int partition) {
        TopicPartition tp = new TopicPartition(topic, partition);
        return consumer.beginningOffsets(List.of(tp), timeout).get(tp);
    }

    /** End-offset requests sent so far by this reader (one per {@link #open}, one per {@link #openAll}). */
    public long endOffsetRequests() {
        return endOffsetRequests.get();
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
     * @throws TimeoutException when {@code deadlineNanos} (a {@link System#nanoTime()}) passes first
     */
    public long read(int partition, long from, long to, long deadlineNanos, Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        return readAll(Map.of(partition, new Range(from, to)), deadlineNanos, (p, record) -> sink.accept(record));
    }

    /**
     * Hands every record in each partition's range to {@code sink} (partition, record), reading all
     * the partitions at once: the consumer is assigned to all of them, so one fetch serves many. A
     * partition leaves the fetches (paused) once its range is read; an empty range is skipped.
     *
     * @param ranges partitions opened by {@link #openAll} or {@link #open}, and what to read of each
     * @return how many records were read
     * @throws TimeoutException when {@code deadlineNanos} (a {@link System#nanoTime()}) passes first
     */
    public long readAll(Map<Integer, Range> ranges, long deadlineNanos, BiConsumer<Integer, ConsumerRecord<byte[], byte[]>> sink) {
        Map<TopicPartition, Long> until = new HashMap<>();
        ranges.forEach((partition, range) -> {
            if (range.from() < range.to()) {
                until.put(new TopicPartition(topic, partition), range.to());
            }
        });
        if (until.isEmpty()) {
            return 0;
        }
        consumer.assign(until.keySet());
        consumer.resume(until.keySet());    // an assignment unchanged since an earlier read keeps that read's pauses
        until.keySet().forEach(tp -> consumer.seek(tp, ranges.get(tp.partition()).from()));
        Set<TopicPartition> reading = new HashSet<>(until.keySet());
        long read = 0;
        while (true) {
            Set<TopicPartition> done = new HashSet<>();
            for (TopicPartition tp : reading) {
                if (consumer.position(tp) >= until.get(tp)) {
                    done.add(tp);
                }
            }
            reading.removeAll(done);
            consumer.pause(done);
            if (reading.isEmpty()) {
                return read;
            }
            if (System.nanoTime() > deadlineNanos) {
                throw new TimeoutException("read " + read + " records of the tails of partitions " + new TreeMap<>(ranges)
                        + "; " + reading.size() + " not read to their end in " + timeout.toSeconds() + " s");
            }
            ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(100));
            for (TopicPartition tp : polled.partitions()) {
                long to = until.get(tp);
                for (ConsumerRecord<byte[], byte[]> record : polled.records(tp)) {
                    if (record.offset() >= to) {
                        break;
                    }
                    read++;
                    sink.accept(tp.partition(), record);
                }
            }
            readProven = true;
        }
    }

    /**
     * What a person can do about a failed read of the output's tails: raise {@code recovery.tail-guard-timeout} when it ran
     * out of time (its own deadline, or a request of the consumer's: Kafka's timeout either way); nothing to add otherwise,
     * the error says it (a missing ACL, a partition that does not exist).
     */
    public static String hint(Throwable error) {
        Throwable t = error;
        for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {   // bounded: initCause can make a cycle
            if (t instanceof TimeoutException) {
                return " (it ran out of time: raise recovery.tail-guard-timeout)";
            }
        }
        return "";
    }

    /** The end offset of {@code partition} (assigned while asking, or the consumer warns that it cannot keep the high watermark). */
    public Long endOffset(int partition) {
        return endOffsets(List.of(partition)).get(partition);
    }

    /**
     * The end offsets of {@code partitions}, in one request: under {@code read_committed} their last stable offsets. Leaves
     * nothing assigned.
     */
    public Map<Integer, Long> endOffsets(Collection<Integer> partitions) {
        List<TopicPartition> tps = partitions.stream().map(partition -> new TopicPartition(topic, partition)).toList();
        try {
            consumer.assign(tps);
            Map<Integer, Long> ends = new HashMap<>();
            endOffsets(tps).forEach((tp, end) -> ends.put(tp.partition(), end));
            return ends;
        } finally {
            release();
        }
    }

    /** Gives up the partitions opened last. */
    public void release() {
        consumer.unsubscribe();
    }

    @Override
    public void close() {
        consumer.close(CLOSE_TIMEOUT);
    }
}
