package io.snowstamp.runtime;

import io.snowstamp.stream.FreezeHook;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fault-test hook of exactly-once, off unless the JVM runs with {@code -Dsnowstamp.test.freeze-after-offsets=N}: the
 * N-th time a stream thread of this process has its input offsets accepted into its open transaction
 * ({@code sendOffsetsToTransaction} returned), the whole process stops itself with SIGSTOP, before the transaction's
 * commit is sent — the old owner of issue 39's item 6, frozen between its offsets and its {@code EndTxn}. The test sends
 * SIGCONT once the partitions have moved. Once per JVM.
 */
final class CommitFreezeHook {
    static final String PROPERTY = "snowstamp.test.freeze-after-offsets";
    private static final AtomicLong COUNT = new AtomicLong();
    private static final CommitFreezeHook NONE = new CommitFreezeHook(Long.MAX_VALUE);

    private final long freezeAt;

    private CommitFreezeHook(long freezeAt) {
        this.freezeAt = freezeAt;
    }

    static CommitFreezeHook fromSystemProperties() {
        String at = System.getProperty(PROPERTY);
        return at == null ? NONE : new CommitFreezeHook(Long.parseLong(at.trim()));
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
