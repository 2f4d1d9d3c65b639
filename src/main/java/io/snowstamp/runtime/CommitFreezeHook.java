package io.snowstamp.runtime;

import io.snowstamp.stream.FreezeHook;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault-test hooks of exactly-once, off unless the JVM runs with one of two properties. The whole process stops itself
 * with SIGSTOP; the test sends SIGCONT once the partitions have moved. Once per JVM.
 * <ul>
 * <li>{@code -Dsnowstamp.test.freeze-after-offsets=N}: the N-th time a stream thread has its input offsets accepted into
 * its open transaction ({@code sendOffsetsToTransaction} returned), before the commit is sent — the old owner of issue
 * 39's item 6, frozen between its offsets and its {@code EndTxn}.
 * <li>{@code -Dsnowstamp.test.freeze-before-flush=K}: the first time a stream thread flushes its producer for a commit
 * with at least K records sent in the open transaction, before they leave the producer (with a long
 * {@code linger.ms}: nothing on the broker yet) — an owner frozen after a drain of records set aside, before its commit.
 * </ul>
 */
final class CommitFreezeHook {
    static final String PROPERTY = "snowstamp.test.freeze-after-offsets";
    static final String FLUSH_PROPERTY = "snowstamp.test.freeze-before-flush";
    private static final AtomicLong COUNT = new AtomicLong();
    private static final AtomicBoolean FLUSH_FROZEN = new AtomicBoolean();
    private static final CommitFreezeHook NONE = new CommitFreezeHook(Long.MAX_VALUE, Long.MAX_VALUE);

    private final long freezeAt;
    private final long flushAfterSends;

    private CommitFreezeHook(long freezeAt, long flushAfterSends) {
        this.freezeAt = freezeAt;
        this.flushAfterSends = flushAfterSends;
    }

    static CommitFreezeHook fromSystemProperties() {
        String at = System.getProperty(PROPERTY);
        String flush = System.getProperty(FLUSH_PROPERTY);
        if (at == null && flush == null) {
            return NONE;
        }
        return new CommitFreezeHook(at == null ? Long.MAX_VALUE : Long.parseLong(at.trim()),
                flush == null ? Long.MAX_VALUE : Long.parseLong(flush.trim()));
    }

    /** Right before the producer is flushed, {@code sends} records sent in its open transaction. */
    void beforeFlush(long sends) {
        if (this == NONE || sends < flushAfterSends || !FLUSH_FROZEN.compareAndSet(false, true)) {
            return;
        }
        FreezeHook.freezeSelf("before the flush of " + sends + " records sent in the open transaction, before its commit");
    }

    /** Right after the offsets of a transaction were accepted, before its commit. */
    void offsetsAccepted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (this == NONE || offsets.isEmpty() || COUNT.incrementAndGet() != freezeAt) {
            return;
        }
        Map<String, Long> pending = new TreeMap<>();
        offsets.forEach((partition, offset) -> pending.put(partition.toString(), offset.offset()));
        FreezeHook.freezeSelf("after the offsets " + pending + " were accepted into the open transaction, before its commit");
    }
}
