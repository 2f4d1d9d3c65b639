package io.snowstamp.resume;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.time.Duration;
import java.util.Properties;

/**
 * Reads the newest records of an output partition with {@code read_uncommitted} — so records of
 * open and aborted transactions count too; transaction markers are skipped by the consumer — and
 * returns the highest ID of the asking worker ({@code snowstamp-id}, or {@code snowid} in the compact format). It reads backwards in growing
 * windows (512, 2048, ... records) until it has seen at least one of the worker's IDs or reached
 * the start of the partition; IDs of other workers (another stamper sharing the output topic) are
 * ignored. Output partition p is written only by task p, and a task's IDs only increase, so the
 * newest own records hold the highest own ID.
 *
 * <p>One consumer, no group, shared by the stream threads of an instance (calls are serialized).
 */
public final class TailGuard implements TailProbe, AutoCloseable {
    private static final int FIRST_WINDOW = 512;

    private final IdLayout layout;
    private final Duration timeout;
    private final PartitionTail tail;

    /** @param clientProps connection and security settings of the cluster */
    public TailGuard(Properties clientProps, String topic, IdLayout layout, Duration timeout) {
        this.tail = new PartitionTail(clientProps, topic, "snowstamp-tail-guard-" + topic, timeout);
        this.layout = layout;
        this.timeout = timeout;
    }

    @Override
    public synchronized Result highestIssued(int partition, long datacenter, long worker) {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        try {
            PartitionTail.Bounds bounds = tail.open(partition, 0);
            long[] highest = {-1};
            long scanned = 0;
            long to = bounds.end();
            long from = bounds.end();
            long window = FIRST_WINDOW;
            while (highest[0] < 0 && from > bounds.begin()) {
                from = Math.max(bounds.begin(), to - window);
                scanned += tail.read(partition, from, to, deadline,
                        record -> highest[0] = Math.max(highest[0], ownId(record, layout, datacenter, worker)));
                to = from;
                window *= 4;
            }
            return new Result(highest[0], scanned, from, bounds.end(), (System.nanoTime() - started) / 1_000_000);
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw timedOut(partition, e);
        } finally {
            tail.release();
        }
    }

    /**
     * The record's ID if it is one of this worker's under {@code layout}, else -1: a record without
     * the header, with a malformed one, or with an ID of another layout or worker is none of its IDs.
     * Shared with the offline {@link OutputScan}, which must judge a record exactly like the live guard.
     */
    public static long ownId(ConsumerRecord<byte[], byte[]> record, IdLayout layout, long datacenter, long worker) {
        try {
            long id = IdHeader.idOf(record.headers());      // either header format: a deployment may have switched
            if (id < 0) {
                return -1;
            }
            DecodedId decoded = layout.decode(id);
            return decoded.worker() == worker && decoded.datacenter() == datacenter ? id : -1;
        } catch (IllegalArgumentException e) {
            return -1;      // not an ID of this layout (a malformed header included)
        }
    }

    private SnowstampException timedOut(int partition, RuntimeException cause) {
        return new SnowstampException("tail guard cannot read output partition " + tail.topic() + "-" + partition + " (" + cause.getMessage()
                + "); the task will not start without knowing the IDs already issued"
                + " (raise recovery.tail-guard-timeout, or check the principal may read " + tail.topic() + ")", cause);
    }

    @Override
    public void close() {
        tail.close();
    }
}
