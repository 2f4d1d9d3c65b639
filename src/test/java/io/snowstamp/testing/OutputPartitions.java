package io.snowstamp.testing;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * A consumer of an output topic whose partitions are functions of the offset: a tail of a million records costs nothing
 * until read, and a backward scan may read the same offsets again (Kafka's {@link MockConsumer} hands each added record
 * out once). {@code poll} serves up to {@value #BATCH} records of every assigned, unpaused partition from its position,
 * as a fetch would; a {@link #stallAt stalled} partition serves nothing from that offset on (a leader that stopped
 * answering), each empty poll taking a few milliseconds as a real one waits. Records it handed out are counted, and
 * the lowest offset served is kept, so a test can say how far back a reader went. Used by one thread.
 */
public final class OutputPartitions extends MockConsumer<byte[], byte[]> {
    /** Records per partition per poll, as the tail reader's {@code max.poll.records} would cut a fetch. */
    public static final int BATCH = 500;

    private final String topic;
    private final int partitions;
    private final Map<Integer, Log> logs = new HashMap<>();
    private long served;

    private static final class Log {
        final long begin;
        final long end;
        final LongFunction<ConsumerRecord<byte[], byte[]>> records;
        long stallAt = Long.MAX_VALUE;
        long lowestRead = Long.MAX_VALUE;

        Log(long begin, long end, LongFunction<ConsumerRecord<byte[], byte[]>> records) {
            this.begin = begin;
            this.end = end;
            this.records = records;
        }
    }

    /** A topic of {@code partitions} empty partitions. */
    public OutputPartitions(String topic, int partitions) {
        super("earliest");
        this.topic = topic;
        this.partitions = partitions;
        List<PartitionInfo> infos = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            infos.add(new PartitionInfo(topic, p, Node.noNode(), new Node[0], new Node[0]));
            partition(p, 0, 0, offset -> {
                throw new AssertionError("an empty partition has no record at " + offset);
            });
        }
        updatePartitions(topic, infos);
    }

    /**
     * Partition {@code partition} holds offsets {@code begin} (inclusive) to {@code end} (exclusive); {@code record} makes
     * the record at an offset (its topic, partition and offset are set here).
     */
    public OutputPartitions partition(int partition, long begin, long end, LongFunction<ConsumerRecord<byte[], byte[]>> record) {
        if (partition < 0 || partition >= partitions) {
            throw new IllegalArgumentException("no partition " + partition + " in " + topic);
        }
        logs.put(partition, new Log(begin, end, record));
        TopicPartition tp = new TopicPartition(topic, partition);
        updateBeginningOffsets(Map.of(tp, begin));
        updateEndOffsets(Map.of(tp, end));
        return this;
    }

    /** From {@code offset} on, {@code partition} serves nothing: a read that needs it never ends. */
    public OutputPartitions stallAt(int partition, long offset) {
        logs.get(partition).stallAt = offset;
        return this;
    }

    /** The lowest offset of {@code partition} a poll served (Long.MAX_VALUE: none). */
    public long lowestRead(int partition) {
        return logs.get(partition).lowestRead;
    }

    /** Records handed out by every poll so far. */
    public long served() {
        return served;
    }

    @Override
    public synchronized ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
        Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> batch = new HashMap<>();
        for (TopicPartition tp : assignment()) {
            if (!tp.topic().equals(topic) || paused().contains(tp)) {
                continue;
            }
            Log log = logs.get(tp.partition());
            long from = Math.max(position(tp), log.begin);
            long to = Math.min(Math.min(log.end, log.stallAt), from + BATCH);
            if (from >= to) {
                continue;
            }
            log.lowestRead = Math.min(log.lowestRead, from);
            List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            for (long offset = from; offset < to; offset++) {
                ConsumerRecord<byte[], byte[]> made = log.records.apply(offset);
                // at its offset, with the made record's timestamp (and its type) and a copy of its headers
                ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(topic, tp.partition(), offset, made.timestamp(),
                        made.timestampType(), 0, 0, made.key(), made.value(),
                        new org.apache.kafka.common.header.internals.RecordHeaders(), java.util.Optional.empty());
                made.headers().forEach(header -> record.headers().add(header));
                records.add(record);
            }
            batch.put(tp, records);
            seek(tp, to);
            served += records.size();
        }
        if (batch.isEmpty()) {
            try {
                Thread.sleep(Math.min(5, timeout.toMillis()));  // a real poll waits for the fetch: no busy loop to the deadline
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return new ConsumerRecords<>(batch, Map.of());
    }
}
