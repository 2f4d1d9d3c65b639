package io.snowstamp.resume;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntToLongFunction;
import java.util.function.LongSupplier;

/**
 * The task-start reads of many tasks in one go: when Kafka Streams hands a stream thread hundreds
 * of restored tasks at once (it initialises them one after another, in one loop, with no poll in
 * between), the first task's start fences and reads the tails of EVERY partition that is ready to
 * start — one fence, one end-offsets request, shared fetches — and the others take their result
 * instead of a round trip each. At 1,024 partitions the per-task reads were ~1,024 sequential
 * round trips; on a loaded thread they also held an open transaction past its timeout.
 *
 * <p><b>Why a prefetched tail is as safe as one read at the task's own start.</b> The safety rule of
 * the tail guard: the tail is read after the partition became this instance's and, under
 * exactly-once, after a previous owner's open transaction on it was fenced; a tail read before the
 * partition was (re)assigned is never used. So a partition joins a batch only while it is ready:
 * <ul>
 *   <li>{@link #restoreEnded}: the worker-state store of the partition's task finished restoring.
 *       Kafka Streams 4.3 restores an active task only after the partition was assigned to this
 *       instance, and calls the restore listener for EVERY active task it restores, an empty
 *       changelog included ({@code StoreChangelogReader.initializeChangelogs} starts each registered
 *       changelog, {@code restoreChangelog} ends it even with nothing to restore); the task's
 *       {@code Processor#init} runs after that, on its stream thread.</li>
 *   <li>It stops being ready, and any result read for it is dropped, at {@link #restoreStarted} (a
 *       new task for it: every (re)assignment restores again, so a result of an earlier assignment
 *       never survives into the next one), at {@link #released} (its task closed or turned into a
 *       standby: the worker-state store's close or cache clear, on the thread that gives the
 *       partition up, or a restore suspended), and at {@link #dropAll} (the instance rebalances).</li>
 * </ul>
 * A partition that is neither ready nor read takes the per-task path ({@code single}), exactly as
 * before. Every result is used once. The batch fences first, then reads: the order of the per-task
 * path. {@link #released} waits for a batch in flight, so a partition is not given up (and cannot
 * reach another instance) while a batch may still fence it: a batch never fences a partition that
 * is another instance's.
 *
 * <p>Thread-safe: the stream threads start tasks, the state updater threads report restores.
 */
public final class TailPrefetch implements TailProbe {
    private static final Logger log = LoggerFactory.getLogger(TailPrefetch.class);

    /** Ends the open transactions of previous owners on output partitions (best effort), before their tails are read. */
    @FunctionalInterface
    public interface Fence {
        void fence(Set<Integer> partitions);

        /** At-least-once: nothing to fence. */
        static Fence none() {
            return partitions -> { };
        }
    }

    /** Reads the tails of many partitions in one go ({@link TailGuard#highestIssued(Map, long)}). */
    @FunctionalInterface
    public interface BatchReader {
        Map<Integer, Result> highestIssued(Map<Integer, Long> workers, long datacenter);
    }

    /** What the prefetch did so far (tests, logs). */
    public record Stats(long batches, long batchedPartitions, long served, long fallbacks) {
    }

    /** A result read in a batch, waiting for its task's start. */
    private record Read(long incarnation, long worker, long readAtNanos, Result result) {
    }

    private final TailProbe single;
    private final BatchReader batch;
    private final Fence fence;
    private final IntToLongFunction workerOf;
    private final long datacenter;
    private final long maxAgeNanos;
    private final LongSupplier nanoClock;

    /** Guards the maps below; never held during a read (the restore threads must not wait for one). */
    private final Object lock = new Object();
    /** partition -> how many times its task was (re)started or released: a read of an older incarnation is stale. */
    private final Map<Integer, Long> incarnations = new HashMap<>();
    /** Partitions whose task finished restoring and whose tail was not read since. */
    private final Set<Integer> ready = new TreeSet<>();
    /**
     * Ready partitions whose committed input offsets Kafka Streams' main consumer has fetched since they became this
     * instance's ({@link #committedFetched}). Under exactly-once that fetch is answered only once no transaction holds an
     * offset commit of the partition pending (KIP-447, {@code require_stable}): a predecessor frozen after its offsets
     * were accepted has committed or aborted by then, and its records are in the tail or invisible. Only such partitions
     * join a batch; the others read their own tails at their own start, after their own fetch (design.md, "Exactly-once:
     * an old owner frozen after its offsets").
     */
    private final Set<Integer> committedKnown = new java.util.HashSet<>();
    /** Tails read in a batch, not taken yet. */
    private final Map<Integer, Read> reads = new HashMap<>();
    /** Fenced in a batch (exactly-once), their task not started yet: the task's own fence has nothing left to do. */
    private final Map<Integer, Long> fenced = new HashMap<>();
    /** Bumped by {@link #dropAll}: a batch that began before does not store its results. */
    private long generation;

    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong batchedPartitions = new AtomicLong();
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong fallbacks = new AtomicLong();

    /**
     * @param single     the per-task path, for a partition without a prefetched result
     * @param batch      reads many tails at once
     * @param fence      fences previous owners' open transactions ({@link Fence#none()} under at-least-once)
     * @param workerOf   partition -> its worker
     * @param datacenter the datacenter of every worker
     * @param maxAgeNanos a prefetched result older than this is not used (read again alone)
     * @param nanoClock  {@link System#nanoTime()} in production
     */
    public TailPrefetch(TailProbe single, BatchReader batch, Fence fence, IntToLongFunction workerOf, long datacenter,
                        long maxAgeNanos, LongSupplier nanoClock) {
        this.single = single;
        this.batch = batch;
        this.fence = fence;
        this.workerOf = workerOf;
        this.datacenter = datacenter;
        this.maxAgeNanos = maxAgeNanos;
        this.nanoClock = nanoClock;
    }

    /** The worker-state store of {@code partition}'s task starts restoring: a new task, anything read before is stale. */
    public void restoreStarted(int partition) {
        synchronized (lock) {
            forget(partition);
        }
    }

    /** The worker-state store of {@code partition}'s task restored: the partition is this instance's, its task starts next. */
    public void restoreEnded(int partition) {
        synchronized (lock) {
            ready.add(partition);
        }
    }

    /**
     * The main consumer fetched the committed input offsets of {@code partitions} (a task's start, or a batch of starting
     * tasks' after one): they may join a batch from now on, until they are restored again, released or dropped.
     */
    public void committedFetched(Iterable<Integer> partitions) {
        synchronized (lock) {
            partitions.forEach(committedKnown::add);
        }
    }

    /**
     * {@code partition}'s task is closed, turned into a standby, or stopped restoring: it may be
     * another instance's from now on. Waits for a batch in flight (which may be fencing it) to end.
     */
    @Override
    public void released(int partition) {
        synchronized (this) {
            synchronized (lock) {
                forget(partition);
            }
        }
    }

    /** The instance rebalances: nothing read or made ready so far is used (the tasks started next read alone or anew). */
    public void dropAll() {
        synchronized (lock) {
            generation++;
            ready.clear();
            committedKnown.clear();
            reads.clear();
            fenced.clear();
        }
    }

    private void forget(int partition) {
        incarnations.merge(partition, 1L, Long::sum);
        ready.remove(partition);
        committedKnown.remove(partition);
        reads.remove(partition);
        fenced.remove(partition);
    }

    /**
     * The fence of {@code partition}'s task start (exactly-once): done already if a batch fenced it;
     * a batch of every ready partition if it is ready; else the partition alone.
     */
    public synchronized void fence(int partition) {
        synchronized (lock) {
            if (isCurrent(partition, fenced.get(partition))) {
                return;
            }
        }
        if (!batchIfReady(partition)) {
            fence.fence(Set.of(partition));
        }
    }

    @Override
    public Result highestIssued(int partition, long datacenter, long worker) {
        synchronized (this) {
            Read read = take(partition);
            if (read == null && batchIfReady(partition)) {
                read = take(partition);
            }
            if (read != null && read.worker() == worker && datacenter == this.datacenter) {
                served.incrementAndGet();
                return read.result();
            }
        }
        fallbacks.incrementAndGet();
        return single.highestIssued(partition, datacenter, worker);
    }

    @Override
    public StampedInputs stampedInputs(int partition, String inputTopic, long from) {
        return single.stampedInputs(partition, inputTopic, from);
    }

    /** What the prefetch did so far. */
    public Stats stats() {
        return new Stats(batches.get(), batchedPartitions.get(), served.get(), fallbacks.get());
    }

    /** The result read for the current task of {@code partition}, removed; null if none or stale. */
    private Read take(int partition) {
        synchronized (lock) {
            fenced.remove(partition);
            Read read = reads.remove(partition);
            boolean fresh = read != null && nanoClock.getAsLong() - read.readAtNanos() <= maxAgeNanos;
            return fresh && isCurrent(partition, read.incarnation()) ? read : null;
        }
    }

    private boolean isCurrent(int partition, Long incarnation) {
        return incarnation != null && incarnation.equals(incarnations.getOrDefault(partition, 0L));
    }

    /**
     * If {@code partition} is ready: fences and reads every ready partition in one go (holding this,
     * so {@link #released} waits for it) and keeps the results. A failed batch keeps nothing: each
     * of its tasks fences and reads alone, and a failure that is real fails there, named.
     *
     * @return whether a batch ran and kept results
     */
    private boolean batchIfReady(int partition) {
        Set<Integer> partitions;
        Map<Integer, Long> incarnation = new HashMap<>();
        long startedGeneration;
        synchronized (lock) {
            if (!ready.contains(partition)) {
                return false;
            }
            // the asking partition's own committed offsets were fetched: its task starts after that fetch
            partitions = new TreeSet<>(ready);
            partitions.retainAll(committedKnown);
            partitions.add(partition);
            ready.removeAll(partitions);
            partitions.forEach(p -> incarnation.put(p, incarnations.getOrDefault(p, 0L)));
            startedGeneration = generation;
        }
        long started = nanoClock.getAsLong();
        Map<Integer, Long> workers = new HashMap<>();
        partitions.forEach(p -> workers.put(p, workerOf.applyAsLong(p)));
        Map<Integer, Result> results;
        try {
            fence.fence(partitions);
            results = batch.highestIssued(workers, datacenter);
        } catch (RuntimeException e) {
            log.warn("cannot read the tails of {} partitions in one go ({}); each of their tasks reads its own at its start{}",
                    partitions.size(), e.getMessage(), PartitionTail.hint(e));
            return false;
        }
        long readAt = nanoClock.getAsLong();
        synchronized (lock) {
            if (generation != startedGeneration) {
                return false;       // the instance rebalanced meanwhile: what was read may be of partitions gone since
            }
            for (int p : partitions) {
                Result result = results.get(p);
                // a partition restarted or released since the batch began keeps nothing of it
                if (result != null && incarnation.get(p).equals(incarnations.getOrDefault(p, 0L))) {
                    reads.put(p, new Read(incarnation.get(p), workers.get(p), readAt, result));
                    fenced.put(p, incarnation.get(p));
                }
            }
        }
        batches.incrementAndGet();
        batchedPartitions.addAndGet(partitions.size());
        // one line per batch of tasks; a task starting alone (the usual move of one partition) logs its own start only
        (partitions.size() > 1 ? log.atInfo() : log.atDebug()).addKeyValue("event", "tails-prefetched")
                .addKeyValue("partitions", partitions.size()).log("read the tails of {} starting partitions in one go in {} ms", partitions.size(),
                        TimeUnit.NANOSECONDS.toMillis(readAt - started));
        return true;
    }
}
