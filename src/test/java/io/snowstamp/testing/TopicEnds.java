package io.snowstamp.testing;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The end offsets of a topic, uncommitted records included: they grow as soon as a stamper writes,
 * before its transaction commits. Fault tests use them to SIGKILL a stamper while it is stamping.
 */
public final class TopicEnds implements AutoCloseable {
    private final Admin admin;

    public TopicEnds(String bootstrapServers) {
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    }

    /** The sum over all partitions of the log end offsets (read_uncommitted: what has been written). */
    public long total(String topic) throws Exception {
        return perPartition(topic).values().stream().mapToLong(Long::longValue).sum();
    }

    /** The log end offset of every partition (read_uncommitted), by partition number. */
    public Map<Integer, Long> perPartition(String topic) throws Exception {
        return ends(topic, IsolationLevel.READ_UNCOMMITTED);
    }

    /** The last stable offset of every partition (read_committed: below it, every transaction is decided). */
    public Map<Integer, Long> committedPerPartition(String topic) throws Exception {
        return ends(topic, IsolationLevel.READ_COMMITTED);
    }

    private Map<Integer, Long> ends(String topic, IsolationLevel isolation) throws Exception {
        int partitions = admin.describeTopics(java.util.List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(topic).partitions().size();
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<Integer, Long> ends = new java.util.TreeMap<>();
        admin.listOffsets(request, new ListOffsetsOptions(isolation)).all()
                .get(30, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
        return ends;
    }

    /** Waits until {@link #total} exceeds {@code above}, polling every 100 ms; false on timeout. */
    public boolean awaitAbove(String topic, long above, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (total(topic) > above) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    /**
     * Waits until every partition's last stable offset is at least {@code min} (committed records
     * in every partition), polling every 100 ms; false on timeout.
     */
    public boolean awaitEveryPartitionCommitted(String topic, long min, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (committedPerPartition(topic).values().stream().allMatch(end -> end >= min)) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    /**
     * Waits until every partition's last stable offset is {@code more} past its value in
     * {@code before} (every partition commits new records), polling every 100 ms; false on timeout.
     */
    public boolean awaitEveryPartitionGrown(String topic, Map<Integer, Long> before, long more, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Map<Integer, Long> now = committedPerPartition(topic);
            if (now.entrySet().stream().allMatch(e -> e.getValue() >= before.getOrDefault(e.getKey(), 0L) + more)) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
