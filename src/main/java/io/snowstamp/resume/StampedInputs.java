package io.snowstamp.resume;

import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;

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
 * <p>Immutable, thread-safe.
 */
public final class StampedInputs {
    /** Nothing known: every input is stamped (at-least-once without provenance, exactly-once, the tail guard off). */
    public static final StampedInputs NONE = new StampedInputs(0, new BitSet(), true, 0, 0);

    private final long from;
    private final BitSet offsets;
    private final boolean complete;
    private final long scanned;
    private final long millis;

    private StampedInputs(long from, BitSet offsets, boolean complete, long scanned, long millis) {
        this.from = from;
        this.offsets = offsets;
        this.complete = complete;
        this.scanned = scanned;
        this.millis = millis;
    }

    /**
     * Reads {@code partition} of {@code tail}'s topic backwards from its end, in growing windows (512 records, then four
     * times more each time, up to {@code maxRecords} in all), until a record of input {@code inputTopic}-{@code partition}
     * below {@code from} shows up or the partition's beginning is reached.
     *
     * @param from the input offset the task starts at (its committed offset): inputs below it are never stamped again
     * @throws RuntimeException when the tail cannot be read before {@code deadlineNanos}
     */
    public static StampedInputs read(PartitionTail tail, int partition, String inputTopic, long from, long maxRecords,
                                     long deadlineNanos) {
        long started = System.nanoTime();
        byte[] prefix = (inputTopic + "/" + partition + "/").getBytes(StandardCharsets.UTF_8);
        BitSet offsets = new BitSet();
        boolean[] reachedBelow = {false};
        long scanned = 0;
        try {
            PartitionTail.Bounds bounds = tail.open(partition, 0);
            long to = bounds.end();
            for (long window = 512; to > bounds.begin() && !reachedBelow[0] && scanned < maxRecords; window *= 4) {
                long fromOffset = Math.max(bounds.begin(), to - Math.min(window, maxRecords - scanned));
                scanned += tail.read(partition, fromOffset, to, deadlineNanos, record -> {
                    long source = sourceOffset(record, prefix);
                    if (source >= from) {
                        if (source - from < Integer.MAX_VALUE) {
                            offsets.set((int) (source - from));
                        }
                    } else if (source >= 0) {
                        reachedBelow[0] = true;
                    }
                });
                to = fromOffset;
            }
            boolean complete = reachedBelow[0] || to <= bounds.begin();
            return new StampedInputs(from, offsets, complete, scanned, (System.nanoTime() - started) / 1_000_000);
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
            if (value.length <= prefix.length || !java.util.Arrays.equals(value, 0, prefix.length, prefix, 0, prefix.length)) {
                return -1;
            }
            return IdHeader.parse(new String(value, prefix.length, value.length - prefix.length, StandardCharsets.ISO_8859_1));
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /**
     * The provenance of the output records a task start already read (the tail guard's newest window,
     * {@link TailGuard}): often all that {@link #read} would read again, since a commit interval of a partition rarely
     * holds more records than that window. Filled by one thread, then read by the task's.
     */
    public static final class Window {
        private final byte[] prefix;
        private long[] sources = new long[64];
        private int size;
        private boolean reachedBegin;

        /** @param inputTopic the input topic: only provenance of its partition {@code partition} counts */
        public Window(String inputTopic, int partition) {
            this.prefix = (inputTopic + "/" + partition + "/").getBytes(StandardCharsets.UTF_8);
        }

        /** One record of the output partition, read by the tail guard. */
        public void note(ConsumerRecord<byte[], byte[]> record) {
            long source = sourceOffset(record, prefix);
            if (source >= 0) {
                if (size == sources.length) {
                    sources = java.util.Arrays.copyOf(sources, size * 2);
                }
                sources[size++] = source;
            }
        }

        /** The read went back to the partition's beginning: nothing older exists. */
        public void reachedBegin() {
            reachedBegin = true;
        }

        /** The inputs from {@code from} on found in this window, if it reached an input below {@code from}; else null. */
        StampedInputs from(long from, long millis) {
            boolean below = reachedBegin;
            BitSet offsets = new BitSet();
            for (int i = 0; i < size; i++) {
                long source = sources[i];
                if (source < from) {
                    below = true;
                } else if (source - from < Integer.MAX_VALUE) {
                    offsets.set((int) (source - from));
                }
            }
            return below ? new StampedInputs(from, offsets, true, size, millis) : null;
        }
    }

    /**
     * The inputs from {@code from} on that already have an output record: from {@code window} when it reaches back far
     * enough (no read), else read from {@code reader} ({@link TailProbe#stampedInputs}).
     */
    public static StampedInputs of(Window window, long from, java.util.function.LongFunction<StampedInputs> reader) {
        StampedInputs known = window == null ? null : window.from(from, 0);
        return known != null ? known : reader.apply(from);
    }

    /** Whether input {@code offset} already has a record in the output. */
    public boolean contains(long offset) {
        long index = offset - from;
        return index >= 0 && index < Integer.MAX_VALUE && offsets.get((int) index);
    }

    /** The highest input offset found stamped (-1: none): past it, nothing is left to skip. */
    public long highest() {
        int last = offsets.length() - 1;
        return last < 0 ? -1 : from + last;
    }

    /** How many inputs were found stamped. */
    public int count() {
        return offsets.cardinality();
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
