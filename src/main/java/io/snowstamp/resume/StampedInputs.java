package io.snowstamp.resume;

import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The inputs of one input partition, from a given offset on, that already have a record in its output partition: what
 * a task that starts under at-least-once must not stamp again (its predecessor stamped them, and died or moved before
 * it committed their input offsets). Found from the provenance header ({@code snowstamp-src}, or {@code snowsrc} in the
 * compact format) of the output partition's newest records, read backwards ({@link #read}).
 *
 * <p>WHY reading back to the committed offset finds them all: a commit under at-least-once flushes the producer before
 * it commits the input offsets, so every output record of an input at or above the committed offset {@code from} was
 * sent after every output record of the inputs before it that this lineage of owners committed; reading the output
 * backwards until a record of an input below {@code from} shows up has passed all of them. What it cannot see: records
 * still on their way from an instance that lost the partition but is still alive (frozen, or cut off from its group
 * coordinator but not from the output's leader) — those land later and stay copies, at most what that instance had
 * stamped and not yet sent when its partition moved.
 *
 * <p>WHY an offset alone is not enough: provenance names an offset, and offsets are not names of inputs forever — an
 * input topic deleted and created again starts at 0 under the old incarnation's provenance, and the compact format
 * names no topic at all (an output another input topic writes too). Skipping on the offset alone skipped inputs that
 * were never stamped: a loss, where a copy is the worst at-least-once may cost. So an input counts as stamped only when
 * the output record of its offset also carries its timestamp (Kafka Streams forwards the input's) and its key (the
 * stamper forwards it unchanged); a different input at that offset is stamped. Where the output topic overwrites
 * timestamps ({@code LogAppendTime}) nothing can be told apart: none of its records counts ({@link #unidentified}).
 * The read further back reads {@code read_committed}: an aborted transaction's records (a switch from exactly-once
 * right after a crash) were never committed to the output, and their inputs must be stamped.
 *
 * <p>Immutable, thread-safe.
 */
public final class StampedInputs {
    /** Nothing known: every input is stamped (at-least-once without provenance, exactly-once, the tail guard off). */
    public static final StampedInputs NONE = new Found().build(0, true, 0, 0);

    private final long from;
    /** Input offsets found, ascending (an offset twice where two different inputs claim it), and what identifies each. */
    private final long[] offsets;
    private final long[] timestamps;
    private final long[] keys;
    private final int distinct;
    private final int unidentified;
    private final boolean complete;
    private final long scanned;
    private final long millis;

    private StampedInputs(long from, long[] offsets, long[] timestamps, long[] keys, int distinct, int unidentified,
                          boolean complete, long scanned, long millis) {
        this.from = from;
        this.offsets = offsets;
        this.timestamps = timestamps;
        this.keys = keys;
        this.distinct = distinct;
        this.unidentified = unidentified;
        this.complete = complete;
        this.scanned = scanned;
        this.millis = millis;
    }

    /**
     * Reads {@code partition} of {@code tail}'s topic backwards from its end, in growing windows (512 records, then four
     * times more each time, up to {@code maxRecords} in all), until a record of input {@code inputTopic}-{@code partition}
     * below {@code from} shows up or the partition's beginning is reached. {@code tail} must read {@code read_committed}
     * (its end is then the last stable offset): a record of an aborted or still open transaction is not in the output.
     *
     * @param from the input offset the task starts at (its committed offset): inputs below it are never stamped again
     * @throws RuntimeException when the tail cannot be read before {@code deadlineNanos}
     */
    public static StampedInputs read(PartitionTail tail, int partition, String inputTopic, long from, long maxRecords,
                                     long deadlineNanos) {
        long started = System.nanoTime();
        byte[] prefix = (inputTopic + "/" + partition + "/").getBytes(StandardCharsets.UTF_8);
        Found found = new Found();
        long scanned = 0;
        try {
            PartitionTail.Bounds bounds = tail.open(partition, 0);
            long to = bounds.end();
            for (long window = 512; to > bounds.begin() && !found.below && scanned < maxRecords; window *= 4) {
                long fromOffset = Math.max(bounds.begin(), to - Math.min(window, maxRecords - scanned));
                scanned += tail.read(partition, fromOffset, to, deadlineNanos, record -> found.note(record, prefix, from));
                to = fromOffset;
            }
            return found.build(from, found.below || to <= bounds.begin(), scanned, (System.nanoTime() - started) / 1_000_000);
        } finally {
            tail.release();
        }
    }

    /**
     * The input offset a record's provenance names if it is a record of the input partition {@code prefix} names
     * ({@code topic/partition/}), else -1 (no provenance, another input, a malformed header).
     */
    static long sourceOffset(ConsumerRecord<byte[], byte[]> record, byte[] prefix) {
        Header found = null;
        for (Header header : record.headers()) {
            if (header.key().equals(IdHeader.SOURCE) || header.key().equals(IdHeader.COMPACT_SOURCE)) {
                found = header;
            }
        }
        if (found == null || found.value() == null) {
            return -1;
        }
        byte[] value = found.value();
        try {
            if (found.key().equals(IdHeader.COMPACT_SOURCE)) {
                return IdHeader.parseBinary(value);     // topic and partition implied: output partition p holds input p
            }
            if (value.length <= prefix.length || !Arrays.equals(value, 0, prefix.length, prefix, 0, prefix.length)) {
                return -1;
            }
            return IdHeader.parse(new String(value, prefix.length, value.length - prefix.length, StandardCharsets.ISO_8859_1));
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /**
     * What identifies an input besides its offset and timestamp: a hash of its key, which the stamper forwards unchanged.
     * 64 bits (FNV-1a), not {@code Arrays.hashCode}'s 32, whose collisions are easy to meet ({@code "Aa"}, {@code "BB"}): a
     * collision would skip another input met at the same offset and millisecond. A null key is apart from every byte key.
     */
    public static long keyHash(byte[] key) {
        if (key == null) {
            return 0x9E3779B97F4A7C15L;
        }
        long hash = 0xcbf29ce484222325L;
        for (byte b : key) {
            hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
        }
        return hash;
    }

    /** The inputs from an offset on found in output records, as a read notes them. Not thread-safe. */
    private static final class Found {
        /** The timestamp of a record that identifies no input: never a record's ({@code NO_TIMESTAMP} is -1). */
        private static final long UNIDENTIFIED = Long.MIN_VALUE;

        private long[] offsets = new long[64];
        private long[] timestamps = new long[64];
        private long[] keys = new long[64];
        private int size;
        /** A record of an input below the start offset was seen: nothing older can be missing. */
        private boolean below;

        void note(ConsumerRecord<byte[], byte[]> record, byte[] prefix, long from) {
            long source = sourceOffset(record, prefix);
            if (source >= from) {
                add(source, record);
            } else if (source >= 0) {
                below = true;
            }
        }

        void add(long source, ConsumerRecord<byte[], byte[]> record) {
            if (size == offsets.length) {
                offsets = Arrays.copyOf(offsets, size * 2);
                timestamps = Arrays.copyOf(timestamps, size * 2);
                keys = Arrays.copyOf(keys, size * 2);
            }
            offsets[size] = source;
            // the broker's time, not the input's (LogAppendTime): this record identifies no input
            timestamps[size] = record.timestampType() == TimestampType.LOG_APPEND_TIME ? UNIDENTIFIED : record.timestamp();
            keys[size++] = keyHash(record.key());
        }

        StampedInputs build(long from, boolean complete, long scanned, long millis) {
            // sorted by offset: (offset - from) in the high half, the record's index in the low half of one long each
            long[] order = new long[size];
            int kept = 0;
            int unidentified = 0;
            for (int i = 0; i < size; i++) {
                if (offsets[i] < from || offsets[i] - from >= Integer.MAX_VALUE) {
                    continue;
                }
                if (timestamps[i] == UNIDENTIFIED) {
                    unidentified++;
                } else {
                    order[kept++] = (offsets[i] - from) << 32 | i;
                }
            }
            Arrays.sort(order, 0, kept);
            long[] sortedOffsets = new long[kept];
            long[] sortedTimestamps = new long[kept];
            long[] sortedKeys = new long[kept];
            int distinct = 0;
            for (int j = 0; j < kept; j++) {
                int i = (int) order[j];
                sortedOffsets[j] = offsets[i];
                sortedTimestamps[j] = timestamps[i];
                sortedKeys[j] = keys[i];
                if (j == 0 || sortedOffsets[j - 1] != offsets[i]) {
                    distinct++;
                }
            }
            return new StampedInputs(from, sortedOffsets, sortedTimestamps, sortedKeys, distinct, unidentified, complete,
                    scanned, millis);
        }
    }

    /**
     * The provenance of the output records a task start already read (the tail guard's newest window,
     * {@link TailGuard}): often all that {@link #read} would read again, since a commit interval of a partition rarely
     * holds more records than that window. But that read is {@code read_uncommitted} (it must see IDs of open
     * transactions), so the window stands in for the {@code read_committed} read only where it cannot hold a record of
     * a transaction that is aborted or may still be ({@link #readRange}). Filled by one thread, then read by the task's.
     */
    public static final class Window {
        private final byte[] prefix;
        private final Found found = new Found();
        private long lowest = Long.MAX_VALUE;
        private int sources;
        private long lastOffset = -1;
        private boolean gap;
        private boolean reachedBegin;
        private boolean committedOnly;

        /** @param inputTopic the input topic: only provenance of its partition {@code partition} counts */
        public Window(String inputTopic, int partition) {
            this.prefix = (inputTopic + "/" + partition + "/").getBytes(StandardCharsets.UTF_8);
        }

        /** One record of the output partition, read by the tail guard in offset order. */
        public void note(ConsumerRecord<byte[], byte[]> record) {
            // a record missing after the first one read: a transaction marker took its offset (read_uncommitted skips it)
            gap |= lastOffset >= 0 && record.offset() != lastOffset + 1;
            lastOffset = record.offset();
            long source = sourceOffset(record, prefix);
            if (source >= 0) {
                lowest = Math.min(lowest, source);
                sources++;
                found.add(source, record);
            }
        }

        /** The read went back to the partition's beginning: nothing older exists. */
        public void reachedBegin() {
            reachedBegin = true;
        }

        /**
         * The window's read covered offsets {@code from..to-1}, and the partition's last stable offset read BEFORE its end
         * {@code to} was {@code stableEnd}. The window holds no record of an aborted or open transaction when both hold:
         * <ul>
         *   <li>{@code stableEnd >= to}: no transaction was open when the stable offset was read, and nothing was written
         *       between that and the end's read (the stable offset is never above the end). A transaction whose records
         *       lie in the window ended before, so its marker lies after them and below {@code to}: inside the window.</li>
         *   <li>the records read are contiguous up to {@code to - 1}: no marker took an offset among or after them. A
         *       marker before the first record ends a transaction whose records lie before the window.</li>
         * </ul>
         */
        public void readRange(long from, long to, long stableEnd) {
            boolean contiguous = lastOffset < 0 ? from >= to : !gap && lastOffset == to - 1;
            committedOnly = contiguous && stableEnd >= to;
        }

        /** The inputs from {@code from} on found in this window, if it reached an input below {@code from}; else null. */
        StampedInputs from(long from, long millis) {
            if (!committedOnly) {
                return null;        // it may hold an aborted transaction's records: the read_committed read decides
            }
            return reachedBegin || lowest < from ? found.build(from, true, sources, millis) : null;
        }
    }

    /**
     * The inputs from {@code from} on that already have an output record: from {@code window} when it reaches back far
     * enough and holds committed records only (no read), else read from {@code reader} ({@link TailProbe#stampedInputs}).
     */
    public static StampedInputs of(Window window, long from, java.util.function.LongFunction<StampedInputs> reader) {
        StampedInputs known = window == null ? null : window.from(from, 0);
        return known != null ? known : reader.apply(from);
    }

    /**
     * Whether input {@code offset}, with {@code timestamp} and key {@code key}, already has a record in the output: one
     * naming the offset and carrying the same timestamp and key. Another input at the same offset (a topic created again,
     * another topic's compact provenance) is not it.
     */
    public boolean contains(long offset, long timestamp, byte[] key) {
        int i = Arrays.binarySearch(offsets, offset);
        if (i < 0) {
            return false;
        }
        while (i > 0 && offsets[i - 1] == offset) {
            i--;
        }
        long hash = keyHash(key);
        for (; i < offsets.length && offsets[i] == offset; i++) {
            if (timestamps[i] == timestamp && keys[i] == hash) {
                return true;
            }
        }
        return false;
    }

    /** The highest input offset found stamped (-1: none): past it, nothing is left to skip. */
    public long highest() {
        return offsets.length == 0 ? -1 : offsets[offsets.length - 1];
    }

    /** How many input offsets were found in output records that identify their input. */
    public int count() {
        return distinct;
    }

    /**
     * How many output records of inputs from the start offset on carry the broker's time ({@code LogAppendTime}) instead
     * of their input's: they identify no input, so their inputs are stamped again.
     */
    public int unidentified() {
        return unidentified;
    }

    /** Whether the read reached an input below the start offset (or the output's beginning): nothing older was missed. */
    public boolean complete() {
        return complete;
    }

    public long scanned() {
        return scanned;
    }

    public long millis() {
        return millis;
    }
}
