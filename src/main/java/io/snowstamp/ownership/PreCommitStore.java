package io.snowstamp.ownership;

import io.snowstamp.state.StoreLayer;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * The worker-state store with one addition: right before Kafka Streams flushes it for a commit, it
 * runs the {@link PreCommitHooks hooks} of the thread's tasks that issued since their last state
 * write, which put the last ID issued. So a commit that needs it — the last ones of a clean shutdown,
 * and every commit where the promise rests on it ({@link PreCommitHooks} says when) — carries the exact
 * {@code lastId} of the records it commits, without a store write per record.
 *
 * <p>WHY a store wrapper: a processor has no commit callback, and on a clean close Kafka Streams
 * 4.3 commits first ({@code TaskManager.tryCloseCleanActiveTasks}: prepareCommit, commit) and only
 * then closes the processors, so a put in {@code Processor#close} misses the final commit under
 * exactly-once. The cache flush ({@code ProcessorStateManager.flushCache}, called by
 * {@code StreamTask.prepareCommit} for every store that is a {@code CachedStateStore}, which this
 * wrapper is, whether or not the store below it caches) is the last point before the commit where a
 * put still joins it. {@link WrappedStateStore} is Kafka Streams' own base for such layers (metered,
 * caching and logging stores extend it).
 *
 * <p>The store below does not cache ({@link StampTopology}): a put reaches the changelog at once, so the
 * puts of every task precede the commit's first producer flush.
 *
 * <p>It also takes the place of Kafka Streams' metered layer (keys and states to bytes and back, over the
 * changelogging store): the metered layer registers ~40 metrics per task's store (put, get, range, flush...
 * rates and latencies, recorded only at the DEBUG recording level), each reported to JMX (an MBean
 * registered again per metric) and to the consumer's telemetry. At a takeover of 512 tasks that was about a
 * third of the stream thread's time before the tasks reached their restores (async-profiler, benchmarks.md
 * "Sixth pass"), and each task's lease waits for its restore. A store that holds one record per task needs
 * none of those metrics.
 */
public final class PreCommitStore extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Integer, WorkerState>
        implements KeyValueStore<Integer, WorkerState> {
    private static final IntegerSerializer KEYS = new IntegerSerializer();
    private static final IntegerDeserializer KEYS_BACK = new IntegerDeserializer();
    private static final WorkerStateSerde STATES = new WorkerStateSerde();

    private final PreCommitHooks hooks;
    private final IntConsumer released;
    private final EarlyLeases early;
    private int partition = -1;
    /** The task's context, to give a write outside any record a record context (see {@link #writable}). */
    private org.apache.kafka.streams.processor.internals.InternalProcessorContext<?, ?> internal;

    private PreCommitStore(KeyValueStore<Bytes, byte[]> wrapped, PreCommitHooks hooks, IntConsumer released, EarlyLeases early) {
        super(wrapped);
        this.hooks = hooks;
        this.released = released;
        this.early = early;
    }

    /**
     * Builds {@code builder}'s store without its metered layer, wrapped in a {@link PreCommitStore}.
     *
     * @param released told the partition when its task gives the store up (closed, or recycled into a standby),
     *                 before the store closes: whatever was read ahead for the partition's task start is void
     *                 ({@link io.snowstamp.resume.TailProbe#released})
     * @param early    told when the store opens (on the stream thread that runs its task) and lets go of its task, so
     *                 that the task's lease can be taken when its restore ends (null: in {@code init} only)
     */
    public static StoreBuilder<KeyValueStore<Integer, WorkerState>> builder(StoreBuilder<KeyValueStore<Integer, WorkerState>> builder,
                                                                    PreCommitHooks hooks, IntConsumer released, EarlyLeases early) {
        return StoreLayer.over(builder, built -> new PreCommitStore(bytesStore(built), hooks, released, early));
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        partition = context.taskId().partition();
        internal = context instanceof org.apache.kafka.streams.processor.internals.InternalProcessorContext<?, ?> given ? given : null;
        super.init(context, root);
        if (early != null) {
            early.opened(partition, this, context.taskId(), this::get);
        }
    }

    @Override
    public void flushCache() {
        hooks.runPending();
        super.flushCache();
    }

    /** The task closes (revoked, lost, corrupted, shutdown), restored or not, started or not. */
    @Override
    public void close() {
        try {
            if (partition >= 0) {
                released.accept(partition);
                if (early != null) {
                    early.closed(partition, this);
                }
            }
        } finally {
            super.close();
        }
    }

    /** Kafka Streams clears the caches only when it recycles the task into a standby (ProcessorStateManager.recycle). */
    @Override
    public void clearCache() {
        if (partition >= 0) {
            released.accept(partition);
            if (early != null) {
                early.closed(partition, this);
            }
        }
        super.clearCache();
    }

    /**
     * The store below Kafka Streams' metered layer (the changelogging store, or the caching one above it if
     * caching is on): {@code Stores.keyValueStoreBuilder} builds metered over bytes, and the metered layer
     * registers its metrics only in {@code init}, which an unwrapped one never runs.
     */
    @SuppressWarnings("unchecked")
    private static KeyValueStore<Bytes, byte[]> bytesStore(KeyValueStore<Integer, WorkerState> built) {
        if (!(built instanceof WrappedStateStore<?, ?, ?> metered) || !(metered.wrapped() instanceof KeyValueStore<?, ?>)) {
            throw new IllegalStateException("the worker-state store builder did not make Kafka Streams' metered store"
                    + " over a byte store");
        }
        return (KeyValueStore<Bytes, byte[]>) metered.wrapped();
    }

    private static Bytes key(Integer key) {
        return Bytes.wrap(KEYS.serialize(null, key));
    }

    /** A partition's key in the worker-state changelog, as this store writes it (the lease record uses it too). */
    public static byte[] keyBytes(int partition) {
        return KEYS.serialize(null, partition);
    }

    /** A worker state as this store writes it to the changelog (the lease record uses it too). */
    public static byte[] stateBytes(WorkerState state) {
        return STATES.serialize(null, state);
    }

    private static WorkerState state(byte[] bytes) {
        return STATES.deserialize(null, bytes);
    }

    /**
     * Kafka Streams' changelogging store stamps each changelog record with the time of the record being processed. A
     * write outside any record — this task's last ID written by the commit of another task of the thread
     * ({@link PreCommitHooks}), or before its first poll at a clean stop, when this task has processed nothing yet —
     * finds no record context there (a NullPointerException that stopped a stamper in {@code FailoverIT}). Give it one, as
     * Kafka Streams gives a punctuation: the wall-clock time, no topic, partition or offset.
     */
    private void writable() {
        if (internal != null && internal.recordContext() == null) {
            internal.setRecordContext(new org.apache.kafka.streams.processor.internals.ProcessorRecordContext(
                    System.currentTimeMillis(), -1L, -1, null, new org.apache.kafka.common.header.internals.RecordHeaders()));
        }
    }

    @Override
    public void put(Integer key, WorkerState value) {
        writable();
        wrapped().put(key(key), stateBytes(value));
    }

    @Override
    public WorkerState putIfAbsent(Integer key, WorkerState value) {
        writable();
        return state(wrapped().putIfAbsent(key(key), stateBytes(value)));
    }

    @Override
    public void putAll(List<KeyValue<Integer, WorkerState>> entries) {
        List<KeyValue<Bytes, byte[]>> bytes = new ArrayList<>(entries.size());
        for (KeyValue<Integer, WorkerState> entry : entries) {
            bytes.add(KeyValue.pair(key(entry.key), stateBytes(entry.value)));
        }
        writable();
        wrapped().putAll(bytes);
    }

    @Override
    public WorkerState delete(Integer key) {
        writable();
        return state(wrapped().delete(key(key)));
    }

    @Override
    public WorkerState get(Integer key) {
        return state(wrapped().get(key(key)));
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> range(Integer from, Integer to) {
        return typed(wrapped().range(from == null ? null : key(from), to == null ? null : key(to)));
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> reverseRange(Integer from, Integer to) {
        return typed(wrapped().reverseRange(from == null ? null : key(from), to == null ? null : key(to)));
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> all() {
        return typed(wrapped().all());
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> reverseAll() {
        return typed(wrapped().reverseAll());
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Integer, WorkerState> prefixScan(P prefix, PS prefixKeySerializer) {
        return typed(wrapped().prefixScan(prefix, prefixKeySerializer));
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    private static KeyValueIterator<Integer, WorkerState> typed(KeyValueIterator<Bytes, byte[]> bytes) {
        return new KeyValueIterator<>() {
            @Override
            public boolean hasNext() {
                return bytes.hasNext();
            }

            @Override
            public KeyValue<Integer, WorkerState> next() {
                KeyValue<Bytes, byte[]> next = bytes.next();
                return KeyValue.pair(KEYS_BACK.deserialize(null, next.key.get()), state(next.value));
            }

            @Override
            public Integer peekNextKey() {
                return KEYS_BACK.deserialize(null, bytes.peekNextKey().get());
            }

            @Override
            public void close() {
                bytes.close();
            }
        };
    }
}
