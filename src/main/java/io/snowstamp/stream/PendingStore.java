package io.snowstamp.stream;

import io.snowstamp.state.StoreLayer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The {@code pending-records} store under at-least-once, counting its task's commits, so that {@link PauseBuffer} deletes
 * a record set aside only once its output record is durable.
 *
 * <p>WHY: at-least-once sends a store delete to the changelog at once, beside the output record and unordered with it (other
 * partitions, the same producer); a delete acknowledged before an output record that then fails (a SIGKILL while it
 * lingers, a partition below {@code min.insync.replicas} past the delivery timeout) would lose a record whose input offset
 * is already committed. A record stamped is durable once a commit after its stamping flushed the producer.
 *
 * <p>HOW a commit is seen, in Kafka Streams 4.3: every commit of a task runs {@code StreamTask.prepareCommit}, which, when
 * the task has anything to commit, calls {@code StreamTask.flush}: {@code ProcessorStateManager.flushCache} (every store
 * that is a {@code CachedStateStore}, as this {@link WrappedStateStore} is: {@link #flushCache} counts) and right after it
 * {@code RecordCollector.flush} (the producer's flush, then the task's send errors rethrown). The stream thread runs a
 * task's processing and punctuations only between commits ({@code StreamThread.runOnce}: process, punctuate, maybeCommit).
 * So a call in {@code process} or a punctuation that sees the count above its value at a stamping comes after a
 * {@code flushCache} that came after the stamping, and after the producer flush that followed it: that flush returned
 * normally, or else it threw (a send failed: {@code TaskCorruptedException}, {@code TaskMigratedException},
 * {@code StreamsException}; also any failure of a later store's cache flush) out of the commit, whose only exception caught
 * with the task still running is a {@code TimeoutException} of the offset commit ({@code TaskManager.commit}), after the
 * flush: the other failures close the task dirty (or stop the thread), and a task started again builds a new
 * {@link PauseBuffer} from the store. Kafka Streams' internal processing threads would break the argument: snowstamp never
 * enables them.
 *
 * <p>That proof needs the task's processing after the commit, which the last commit before a task closes (a clean stop, a
 * rebalance) never has: the records stamped since the commit before it stayed in the store, and a task started again
 * without the output read (the tail guard off) stamped them again. So at the end of every commit ({@code
 * StateStore.commit}, from {@code StreamTask.postCommit}, after the producer flush of a commit that flushed) the store
 * runs its {@link #onCommit} hook: the buffer deletes what the producer's own flushes prove durable ({@link
 * ProducerFlushes}), a proof that holds there, where the commit count's does not (Kafka Streams' shutdown post-commits a
 * task whose flush failed as well).
 */
final class PendingStore extends WrappedStateStore<KeyValueStore<Long, Record<byte[], byte[]>>, Long, Record<byte[], byte[]>>
        implements KeyValueStore<Long, Record<byte[], byte[]>> {
    private static final Logger log = LoggerFactory.getLogger(PendingStore.class);
    /** Cache flushes of the task's commits; read and written on its stream thread only. */
    private long commits;
    /** Run at the end of each commit (null: none); the stream thread's. */
    private Runnable committed;
    /** The task's context (its record context tells whether a write can be logged now). */
    private StateStoreContext context;

    private PendingStore(KeyValueStore<Long, Record<byte[], byte[]>> wrapped) {
        super(wrapped);
    }

    /** Counts the commits of the task of {@code store} as a processor gets it; null: not counted (exactly-once). */
    static LongSupplier commitsOf(StateStore store) {
        PendingStore pending = store instanceof PendingStore own ? own
                : store instanceof WrappedStateStore<?, ?, ?> wrapper ? wrapper.findInner(PendingStore.class) : null;
        return pending == null ? null : () -> pending.commits;
    }

    /** {@code builder}'s store, counting commits. */
    static StoreBuilder<KeyValueStore<Long, Record<byte[], byte[]>>> builder(StoreBuilder<KeyValueStore<Long, Record<byte[], byte[]>>> builder) {
        return StoreLayer.over(builder, PendingStore::new);
    }

    /**
     * Runs {@code hook} at the end of each commit of {@code store}'s task in place of {@code replaced} (null: whatever ran
     * before, an earlier incarnation's); a null hook runs nothing. Nothing is replaced but {@code replaced}, so that a
     * closed incarnation's last call cannot remove the next one's. A no-op unless the store counts commits.
     */
    static void onCommit(StateStore store, Runnable replaced, Runnable hook) {
        PendingStore pending = store instanceof PendingStore own ? own
                : store instanceof WrappedStateStore<?, ?, ?> wrapper ? wrapper.findInner(PendingStore.class) : null;
        if (pending != null && (replaced == null || pending.committed == replaced)) {
            pending.committed = hook;
        }
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        this.context = context;
        super.init(context, root);
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
        super.commit(changelogOffsets);
        // a delete is logged with the task's record context: none before the task processed anything (nothing to delete)
        if (committed != null && (!(context instanceof ProcessorContext<?, ?> processing) || processing.recordMetadata().isPresent())) {
            try {
                committed.run();
            } catch (RuntimeException e) {
                // a delete's send refused (or an earlier delete's failure, which the send reports and clears: only deletes
                // are sent after the commit's flush). The entries stay for the proof by commit counts, or the next owner:
                // a copy at worst; the commit stands
                log.warn("{}: the records stamped from this store stay in it until a later commit: {}", name(), e.getMessage());
            }
        }
    }

    @Override
    public void flushCache() {
        commits++;
        super.flushCache();
    }

    @Override
    public void put(Long key, Record<byte[], byte[]> value) {
        wrapped().put(key, value);
    }

    @Override
    public Record<byte[], byte[]> putIfAbsent(Long key, Record<byte[], byte[]> value) {
        return wrapped().putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<Long, Record<byte[], byte[]>>> entries) {
        wrapped().putAll(entries);
    }

    @Override
    public Record<byte[], byte[]> delete(Long key) {
        return wrapped().delete(key);
    }

    @Override
    public Record<byte[], byte[]> get(Long key) {
        return wrapped().get(key);
    }

    @Override
    public KeyValueIterator<Long, Record<byte[], byte[]>> range(Long from, Long to) {
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<Long, Record<byte[], byte[]>> reverseRange(Long from, Long to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<Long, Record<byte[], byte[]>> all() {
        return wrapped().all();
    }

    @Override
    public KeyValueIterator<Long, Record<byte[], byte[]>> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Long, Record<byte[], byte[]>> prefixScan(P prefix, PS prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }
}
