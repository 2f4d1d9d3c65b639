package io.snowstamp.resume;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Reads the newest records of an output partition with {@code read_uncommitted} — so records of
 * open and aborted transactions count too; transaction markers are skipped by the consumer — and
 * returns the highest ID of the asking worker ({@code snowstamp-id}, or {@code snowid} in the compact format). It reads backwards in growing
 * windows (512, 2048, ... records) until it has seen at least one of the worker's IDs or reached
 * the start of the partition; IDs of other workers (another stamper sharing the output topic) are
 * ignored. Output partition p is written only by task p, and a task's IDs only increase, so the
 * newest own records hold the highest own ID.
 *
 * <p>Many partitions are read in one go by {@link #highestIssued(Map, long)} (what {@link TailPrefetch}
 * uses when many tasks start together); one alone by {@link #highestIssued(int, long, long)}.
 *
 * <p>One consumer, no group, shared by the stream threads of an instance (calls are serialized).
 */
public final class TailGuard implements TailProbe, AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(TailGuard.class);
    private static final int FIRST_WINDOW = 512;

    /** The most a start under at-least-once reads back for the inputs already stamped: about a commit interval of a busy partition. */
    static final long MAX_STAMPED_INPUTS_READ = 1 << 20;

    private final IdLayout layout;
    private final Duration timeout;
    private final PartitionTail tail;
    /** The input topic whose provenance the results collect ({@link Result#sources}); null: none. */
    private final String inputTopic;
    /**
     * Makes the {@code read_committed} readers, by purpose: {@link #stampedInputs}'s, made at its first use, a consumer of
     * its own, so that a read further back (up to the timeout, or a million records) never holds the tail reads of other
     * tasks' starts, which share {@link #tail} (issue 42: no task's wait holds another task; such reads wait for each
     * other, beside the stream threads); and the one that reads the last stable offsets before a start's tail read, under
     * this guard's lock, so that its window may stand in for the first ({@link StampedInputs.Window#readRange}).
     */
    private final java.util.function.Function<String, PartitionTail> committedReaders;
    private final Object stampedLock = new Object();
    private volatile PartitionTail stamped;
    private PartitionTail stableEnds;

    /** @param clientProps connection and security settings of the cluster */
    public TailGuard(Properties clientProps, String topic, IdLayout layout, Duration timeout) {
        this(clientProps, topic, layout, timeout, null);
    }

    /**
     * @param inputTopic where the output's records come from: the results carry the provenance of the records read
     *                   ({@link Result#sources}), for a start under at-least-once; null: not collected
     */
    public TailGuard(Properties clientProps, String topic, IdLayout layout, Duration timeout, String inputTopic) {
        this(new PartitionTail(clientProps, topic, "snowstamp-tail-guard-" + topic, timeout),
                purpose -> new PartitionTail(clientProps, topic, "snowstamp-" + purpose + "-" + topic, timeout, true), layout, timeout,
                inputTopic);
    }

    /** On a reader the caller made (tests: a fake consumer of the output partition); this guard closes it. */
    TailGuard(PartitionTail tail, IdLayout layout, Duration timeout, String inputTopic) {
        this(tail, null, layout, timeout, inputTopic);
    }

    /**
     * As above, with the {@code read_committed} readers the caller makes (null: {@link #stampedInputs} reads {@code tail}
     * under the guard's lock, and no window stands in for it).
     */
    TailGuard(PartitionTail tail, java.util.function.Function<String, PartitionTail> committedReaders, IdLayout layout,
              Duration timeout, String inputTopic) {
        this.committedReaders = committedReaders;
        this.tail = tail;
        this.layout = layout;
        this.timeout = timeout;
        this.inputTopic = inputTopic;
    }

    @Override
    public StampedInputs stampedInputs(int partition, String input, long from) {
        if (committedReaders == null) {
            synchronized (this) {
                return StampedInputs.read(tail, partition, input, from, MAX_STAMPED_INPUTS_READ, System.nanoTime() + timeout.toNanos());
            }
        }
        synchronized (stampedLock) {
            if (stamped == null) {
                stamped = committedReaders.apply("stamped-inputs");
            }
            return StampedInputs.read(stamped, partition, input, from, MAX_STAMPED_INPUTS_READ, System.nanoTime() + timeout.toNanos());
        }
    }

    @Override
    public synchronized Result highestIssued(int partition, long datacenter, long worker) {
        try {
            return highestIssued(Map.of(partition, worker), datacenter).get(partition);
        } catch (SnowstampException e) {
            throw e;
        } catch (RuntimeException e) {
            throw unreadable(partition, e);
        }
    }

    /**
     * The tails of many partitions in one go: ONE end-offsets request for all of them, then the
     * newest {@value #FIRST_WINDOW} records of every partition read together (one consumer assigned
     * to all of them). Only a partition whose newest records hold none of its worker's IDs is then
     * read further back on its own, in growing windows. Each result is what {@link #highestIssued(int,
     * long, long)} would have returned for that partition at this moment ({@code millis}: the whole batch).
     *
     * @param workers partition -> the worker whose IDs count in it; every partition must already be
     *                the caller's (the end offsets read here are the safety reads)
     * @throws RuntimeException when the tails cannot be read within the timeout, or Kafka refuses (the
     *                          caller then reads each one alone, or refuses to start the task)
     */
    public synchronized Map<Integer, Result> highestIssued(Map<Integer, Long> workers, long datacenter) {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        try {
            Map<Integer, Long> stable = inputTopic == null ? Map.of() : stableEnds(workers.keySet());
            Map<Integer, PartitionTail.Bounds> bounds = tail.openAll(workers.keySet());
            Map<Integer, PartitionTail.Range> newest = new HashMap<>();
            bounds.forEach((partition, b) -> newest.put(partition, new PartitionTail.Range(Math.max(b.begin(), b.end() - FIRST_WINDOW), b.end())));
            Map<Integer, long[]> found = new HashMap<>();     // partition -> {highest own ID, records scanned}
            Map<Integer, StampedInputs.Window> sources = new HashMap<>();
            workers.keySet().forEach(partition -> {
                found.put(partition, new long[] {-1, 0});
                if (inputTopic != null) {
                    sources.put(partition, new StampedInputs.Window(inputTopic, partition));
                }
            });
            tail.readAll(newest, deadline, (partition, record) -> {
                note(found.get(partition), record, datacenter, workers.get(partition));
                StampedInputs.Window window = sources.get(partition);
                if (window != null) {
                    window.note(record);
                }
            });
            Map<Integer, Result> results = new TreeMap<>();
            for (Map.Entry<Integer, PartitionTail.Bounds> entry : bounds.entrySet()) {
                int partition = entry.getKey();
                long[] seen = found.get(partition);
                long from = newest.get(partition).from();
                long to = from;
                // none of the worker's IDs among the newest records (another stamper shares the topic): further back, alone
                for (long window = 4L * FIRST_WINDOW; seen[0] < 0 && from > entry.getValue().begin(); window *= 4) {
                    from = Math.max(entry.getValue().begin(), to - window);
                    tail.readAll(Map.of(partition, new PartitionTail.Range(from, to)), deadline,
                            (p, record) -> note(seen, record, datacenter, workers.get(partition)));
                    to = from;
                }
                StampedInputs.Window window = sources.get(partition);
                if (window != null) {
                    PartitionTail.Range range = newest.get(partition);
                    window.readRange(range.from(), range.to(), stable.getOrDefault(partition, -1L));
                    if (range.from() <= entry.getValue().begin()) {
                        window.reachedBegin();
                    }
                }
                results.put(partition, new Result(seen[0], seen[1], from, entry.getValue().end(), (System.nanoTime() - started) / 1_000_000,
                        window));
            }
            return results;
        } finally {
            tail.release();
        }
    }

    /**
     * The last stable offsets of {@code partitions}, read before their ends (see {@link StampedInputs.Window#readRange});
     * none when they cannot be read: the windows then stand in for nothing, and the tail read goes on (what it is for, the
     * IDs issued, needs none of this).
     */
    private Map<Integer, Long> stableEnds(java.util.Collection<Integer> partitions) {
        if (committedReaders == null) {
            return Map.of();
        }
        try {
            if (stableEnds == null) {
                stableEnds = committedReaders.apply("stable-ends");
            }
            return stableEnds.endOffsets(partitions);
        } catch (RuntimeException e) {
            log.debug("cannot read the last stable offsets of {} output partitions ({}): their starts read what is already"
                    + " stamped on their own", partitions.size(), e.toString());
            return Map.of();
        }
    }

    private void note(long[] seen, ConsumerRecord<byte[], byte[]> record, long datacenter, long worker) {
        seen[0] = Math.max(seen[0], ownId(record, layout, datacenter, worker));
        seen[1]++;
    }

    /** End-offset requests this guard sent: with batched task starts, far fewer than the tasks started. */
    public long endOffsetRequests() {
        return tail.endOffsetRequests();
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

    private SnowstampException unreadable(int partition, RuntimeException cause) {
        return new SnowstampException("tail guard cannot read output partition " + tail.topic() + "-" + partition + " (" + cause.getMessage()
                + "); the task will not start without knowing the IDs already issued" + PartitionTail.hint(cause), cause);
    }

    @Override
    public void close() {
        tail.close();
        if (stableEnds != null) {
            stableEnds.close();
        }
        PartitionTail reader = stamped;      // not under its lock: a read under way would hold the close for its timeout
        if (reader != null) {
            reader.close();
        }
    }
}
