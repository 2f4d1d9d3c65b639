package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.stream.Names;
import io.snowstamp.stream.TailProbe;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

/**
 * Reads the newest records of an output partition with {@code read_uncommitted} — so records of
 * open and aborted transactions count too; transaction markers are skipped by the consumer — and
 * returns the highest {@code snowstamp-id} of the asking worker. It reads backwards in growing
 * windows (512, 2048, ... records) until it has seen at least one of the worker's IDs or reached
 * the start of the partition; IDs of other workers (another stamper sharing the output topic) are
 * ignored. Output partition p is written only by task p, and a task's IDs only increase, so the
 * newest own records hold the highest own ID.
 *
 * <p>One consumer, no group, shared by the stream threads of an instance (calls are serialized).
 */
public final class TailGuard implements TailProbe, AutoCloseable {
    private static final int FIRST_WINDOW = 512;

    private final String topic;
    private final IdLayout layout;
    private final Duration timeout;
    private final KafkaConsumer<byte[], byte[]> consumer;
    /** A read of the topic succeeded once: READ access is proven (see {@link #highestIssued}). */
    private boolean readProven;

    /** @param clientProps connection and security settings of the cluster */
    public TailGuard(Properties clientProps, String topic, IdLayout layout, Duration timeout) {
        Properties props = new Properties();
        props.putAll(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "snowstamp-tail-guard-" + topic);
        // the reads stop at a known end offset: never let the broker hold a fetch open waiting for more
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.topic = topic;
        this.layout = layout;
        this.timeout = timeout;
    }

    @Override
    public synchronized Result highestIssued(int partition, long datacenter, long worker) {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        TopicPartition tp = new TopicPartition(topic, partition);
        try {
            consumer.assign(List.of(tp));
            long begin = consumer.beginningOffsets(List.of(tp), timeout).get(tp);
            long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
            if (begin == end && !readProven) {
                // nothing to read, but prove we may: a missing READ ACL must stop the task now, not
                // at the first restart after records exist. ACLs are per topic, so once is enough:
                // the 50 ms poll per empty partition made a first start on 64 partitions 3 s slower.
                consumer.seek(tp, end);
                consumer.poll(Duration.ofMillis(50));
            }
            readProven = true;
            long highest = -1;
            long scanned = 0;
            long to = end;
            long from = end;
            long window = FIRST_WINDOW;
            while (highest < 0 && from > begin) {
                from = Math.max(begin, to - window);
                consumer.seek(tp, from);
                while (consumer.position(tp) < to) {
                    if (System.nanoTime() > deadline) {
                        throw timedOut(partition, null);
                    }
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                        if (record.offset() >= to) {
                            break;
                        }
                        scanned++;
                        highest = Math.max(highest, ownId(record, datacenter, worker));
                    }
                }
                to = from;
                window *= 4;
            }
            return new Result(highest, scanned, from, end, (System.nanoTime() - started) / 1_000_000);
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw timedOut(partition, e);
        } finally {
            consumer.unsubscribe();
        }
    }

    /** The record's ID if it is one of this worker's, else -1. */
    private long ownId(ConsumerRecord<byte[], byte[]> record, long datacenter, long worker) {
        Header header = record.headers().lastHeader(Names.ID_HEADER);
        if (header == null || header.value() == null) {
            return -1;
        }
        try {
            long id = Long.parseLong(new String(header.value(), StandardCharsets.US_ASCII));
            DecodedId decoded = layout.decode(id);
            return decoded.worker() == worker && decoded.datacenter() == datacenter ? id : -1;
        } catch (IllegalArgumentException e) {
            return -1;      // not an ID of this layout (NumberFormatException included)
        }
    }

    private SnowstampException timedOut(int partition, RuntimeException cause) {
        String reason = cause == null ? "no answer within " + timeout.toSeconds() + " s" : cause.getMessage();
        return new SnowstampException("tail guard cannot read output partition " + topic + "-" + partition + " (" + reason
                + "); the task will not start without knowing the IDs already issued"
                + " (raise recovery.tail-guard-timeout, or check the principal may read " + topic + ")", cause);
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }
}
