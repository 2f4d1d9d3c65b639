package io.snowstamp.stream;

import io.snowstamp.state.WorkerState;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * The worker-state store with one addition: right before Kafka Streams flushes it for a commit, it
 * runs the {@link PreCommitHooks hooks} of the thread's tasks that issued since their last state
 * write, which put the last ID issued. So every commit — the periodic ones, the one before a
 * partition is revoked, and the last one of a clean shutdown — carries the exact {@code lastId} of
 * the records it commits, without a store write per record.
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
 */
final class PreCommitStore extends WrappedStateStore<KeyValueStore<Integer, WorkerState>, Integer, WorkerState>
        implements KeyValueStore<Integer, WorkerState> {
    private final PreCommitHooks hooks;
    private final IntConsumer released;
    private final EarlyLeases early;
    private int partition = -1;

    private PreCommitStore(KeyValueStore<Integer, WorkerState> wrapped, PreCommitHooks hooks, IntConsumer released, EarlyLeases early) {
        super(wrapped);
        this.hooks = hooks;
        this.released = released;
        this.early = early;
    }

    /**
     * Builds {@code builder}'s store wrapped in a {@link PreCommitStore}.
     *
     * @param released told the partition when its task gives the store up (closed, or recycled into a standby),
     *                 before the store closes: whatever was read ahead for the partition's task start is void
     *                 ({@link io.snowstamp.resume.TailProbe#released})
     * @param early    told when the store opens (on the stream thread that runs its task) and lets go of its task, so
     *                 that the task's lease can be taken when its restore ends (null: in {@code init} only)
     */
    static StoreBuilder<KeyValueStore<Integer, WorkerState>> builder(StoreBuilder<KeyValueStore<Integer, WorkerState>> builder,
                                                                     PreCommitHooks hooks, IntConsumer released, EarlyLeases early) {
        return new StoreBuilder<>() {
            @Override
            public StoreBuilder<KeyValueStore<Integer, WorkerState>> withCachingEnabled() {
                builder.withCachingEnabled();
                return this;
            }

            @Override
            public StoreBuilder<KeyValueStore<Integer, WorkerState>> withCachingDisabled() {
                builder.withCachingDisabled();
                return this;
            }

            @Override
            public StoreBuilder<KeyValueStore<Integer, WorkerState>> withLoggingEnabled(Map<String, String> config) {
                builder.withLoggingEnabled(config);
                return this;
            }

            @Override
            public StoreBuilder<KeyValueStore<Integer, WorkerState>> withLoggingDisabled() {
                builder.withLoggingDisabled();
                return this;
            }

            @Override
            public KeyValueStore<Integer, WorkerState> build() {
                return new PreCommitStore(builder.build(), hooks, released, early);
            }

            @Override
            public Map<String, String> logConfig() {
                return builder.logConfig();
            }

            @Override
            public boolean loggingEnabled() {
                return builder.loggingEnabled();
            }

            @Override
            public String name() {
                return builder.name();
            }
        };
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        partition = context.taskId().partition();
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

    @Override
    public void put(Integer key, WorkerState value) {
        wrapped().put(key, value);
    }

    @Override
    public WorkerState putIfAbsent(Integer key, WorkerState value) {
        return wrapped().putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<Integer, WorkerState>> entries) {
        wrapped().putAll(entries);
    }

    @Override
    public WorkerState delete(Integer key) {
        return wrapped().delete(key);
    }

    @Override
    public WorkerState get(Integer key) {
        return wrapped().get(key);
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> range(Integer from, Integer to) {
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> reverseRange(Integer from, Integer to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> all() {
        return wrapped().all();
    }

    @Override
    public KeyValueIterator<Integer, WorkerState> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Integer, WorkerState> prefixScan(P prefix, PS prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }
}
