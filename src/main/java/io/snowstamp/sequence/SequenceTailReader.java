package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.resume.PartitionTail;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * {@link SequenceTail} on a Kafka consumer: no group, {@code read_uncommitted}, one consumer shared
 * by the stream threads of an instance (calls are serialized). Records without both
 * {@code snowstamp-tag} and a decimal {@code snowstamp-id} (snowflake output, foreign records) are
 * skipped.
 */
public final class SequenceTailReader implements SequenceTail, AutoCloseable {
    private final Duration timeout;
    private final PartitionTail tail;

    /** @param clientProps connection and security settings of the cluster */
    public SequenceTailReader(Properties clientProps, String topic, Duration timeout) {
        this(new PartitionTail(clientProps, topic, "snowstamp-sequence-tail-" + topic, timeout), timeout);
    }

    /** On a reader the caller made (tests: a fake consumer of the output partition); this reader closes it. */
    SequenceTailReader(PartitionTail tail, Duration timeout) {
        this.tail = tail;
        this.timeout = timeout;
    }

    @Override
    public synchronized Scan scan(int partition, long fromOffset) {
        long started = System.nanoTime();
        try {
            PartitionTail.Bounds bounds = tail.open(partition, fromOffset);
            long from = Math.max(bounds.begin(), fromOffset);
            Map<String, Long> highest = new HashMap<>();
            long scanned = from >= bounds.end() ? 0
                    : tail.read(partition, from, bounds.end(), started + timeout.toNanos(), record -> note(record, highest));
            // the log start read after the scan: records deleted since the cached one was read (or during the scan) were
            // skipped unseen, and the start must know it (ResumeRule: the output's records gone)
            from = Math.max(from, Math.min(tail.beginningNow(partition), bounds.end()));
            return new Scan(highest, scanned, from, bounds.end(), (System.nanoTime() - started) / 1_000_000);
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw failed(partition, e.getMessage(), e);
        } finally {
            tail.release();
        }
    }

    @Override
    public synchronized long endOffset(int partition) {
        try {
            Long end = tail.endOffset(partition);
            if (end == null) {
                throw failed(partition, "no end offset", null);
            }
            return end;
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw failed(partition, e.getMessage(), e);
        }
    }

    private static void note(ConsumerRecord<byte[], byte[]> record, Map<String, Long> highest) {
        Header tag = record.headers().lastHeader(IdHeader.TAG);
        Header id = record.headers().lastHeader(IdHeader.ID);
        if (tag == null || tag.value() == null || id == null || id.value() == null) {
            return;
        }
        long number;
        try {
            number = IdHeader.parse(id.value());
        } catch (IllegalArgumentException e) {
            return;     // not a number this numberer wrote: no tag's number to resume after
        }
        highest.merge(new String(tag.value(), StandardCharsets.UTF_8), number, Math::max);
    }

    private SnowstampException failed(int partition, String reason, RuntimeException cause) {
        return new SnowstampException("sequence tail scan cannot read output partition " + tail.topic() + "-" + partition + " (" + reason
                + "); the task will not start without knowing the numbers already issued" + PartitionTail.hint(cause), cause);
    }

    @Override
    public void close() {
        tail.close();
    }
}
