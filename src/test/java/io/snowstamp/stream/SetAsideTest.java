package io.snowstamp.stream;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The way out of the records set aside, on its own: a drain scheduled by one incarnation of a task does nothing once that
 * incarnation closed, even when its punctuation still runs — the schedule {@code DeposedLeaderIT} met under a cluster
 * fault, where a stale drain read a record the next incarnation had already taken out of the shared store and stopped
 * the stamper.
 */
class SetAsideTest {
    private static final int PARTITION = 0;

    /** Refuses every value: the record goes to the dead-letter topic. */
    private static final ValueField REFUSING = new ValueField() {
        @Override
        public Object inspect(byte[] value) {
            throw new io.snowstamp.BadRecordException(io.snowstamp.BadRecordException.Code.FIELD_EXISTS, "refused");
        }

        @Override
        public byte[] write(byte[] value, Object plan, long id, byte[] digits) {
            return value;
        }

        @Override
        public int maxGrowth() {
            return 0;
        }
    };

    private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
    private final List<Long> stamped = new ArrayList<>();
    /** The value's write refuses it, after the check let it through. */
    private boolean refuseOnWrite;

    @Test
    void shouldStampTheRecordsSetAsideWhenTheirDrainRuns() {
        KeyValueStore<Long, Record<byte[], byte[]>> store = store();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        hold(aside, 8);

        punctuate();

        assertThat(stamped).containsExactly(7L, 8L);
        assertThat(aside.isEmpty()).isTrue();
    }

    @Test
    void shouldDoNothingWhenAPunctuationOfAClosedIncarnationRuns() {
        KeyValueStore<Long, Record<byte[], byte[]>> store = store();
        SetAside first = setAside(new PauseBuffer(store));
        hold(first, 7);
        first.close();
        // the next incarnation restores the same store, stamps the record and takes it out
        PauseBuffer next = new PauseBuffer(store);
        assertThat(next.size()).isEqualTo(1);
        next.removeHead();

        // the first incarnation's punctuation still runs (a close that failed before its cancel, a start without a close)
        punctuate();

        assertThat(stamped).as("a stale drain stamps nothing").isEmpty();
        assertThat(next.isEmpty()).isTrue();
    }

    @Test
    void shouldStampEveryRecordOfARestoredStoreWhoseNumbersHaveGaps() {
        // an at-least-once task closed dirty and started here again: the changelog replayed from the last checkpoint over
        // the local store brought back 5 (its put acknowledged) beside 7 (local only), 6 and 8 taken out before the close
        KeyValueStore<Long, Record<byte[], byte[]>> store = store();
        store.put(5L, record(105));
        store.put(7L, record(107));
        store.put(9L, record(109));
        PauseBuffer restored = new PauseBuffer(store);
        assertThat(restored.size()).isEqualTo(3);
        SetAside aside = setAside(restored);
        aside.restored(false);
        hold(aside, 110);

        punctuate();

        assertThat(stamped).as("every record held, in order, none read as missing").containsExactly(105L, 107L, 109L, 110L);
        assertThat(aside.isEmpty()).isTrue();
        assertThat(restored.size()).isZero();
        assertThat(restored.peek()).isNull();
    }

    /**
     * At-least-once: the records taken out (stamped, or refused to the dead-letter topic) stay in the store until a commit
     * passed after it, so that a crash before their output is durable finds them set aside again; the numbers missing
     * from a restored store stay skipped, and only the records still waiting count.
     */
    @Test
    void shouldKeepTheRecordsTakenOutInTheStoreUntilACommitPassedUnderAtLeastOnce() {
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        store.put(5L, record(105));
        store.put(7L, record(107));
        PauseBuffer paused = new PauseBuffer(store);
        SetAside aside = setAside(paused);
        aside.restored(false);
        hold(aside, 110);

        punctuate();

        assertThat(stamped).containsExactly(105L, 107L, 110L);
        assertThat(paused.size()).as("none waits").isZero();
        assertThat(keys(store)).as("no commit yet").containsExactly(5L, 7L, 8L);
        punctuate();
        assertThat(keys(store)).as("still no commit").containsExactly(5L, 7L, 8L);
        assertThat(new PauseBuffer(store).size()).as("a restart now sets them aside again").isEqualTo(3);

        ((PendingStore) store).flushCache();        // a commit: its producer flush made their output durable
        punctuate();

        assertThat(keys(store)).isEmpty();
        assertThat(stamped).as("none stamped again").hasSize(3);
    }

    @Test
    void shouldKeepARecordRefusedOnItsWayOutInTheStoreUntilACommitPassedUnderAtLeastOnce() {
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        store.put(5L, record(105));
        SetAside aside = setAside(new PauseBuffer(store), REFUSING);
        aside.restored(false);

        assertThat(org.assertj.core.api.Assertions.catchThrowable(this::punctuate)).isInstanceOf(SetAsideRefused.class);
        assertThat(aside.isEmpty()).isTrue();
        assertThat(keys(store)).as("its dead letter not yet durable").containsExactly(5L);

        ((PendingStore) store).flushCache();
        punctuate();

        assertThat(keys(store)).isEmpty();
    }

    /**
     * At-least-once, the end of a commit (the last before a task closes has no processing after it): the records taken out
     * go when the producer's flushes prove their output durable — a flush after their sends and no send failed since —
     * and stay otherwise, for the proof by commit counts in the task's processing.
     */
    @Test
    void shouldDeleteTheRecordsTakenOutAtTheEndOfACommitWhoseFlushMadeTheirOutputDurable() {
        ProducerFlushes producer = producer();
        producer.sending();         // this thread sends with it, as a stream thread with its producer
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        hold(aside, 8);
        punctuate();
        assertThat(stamped).containsExactly(7L, 8L);

        ((PendingStore) store).commit(Map.of());
        assertThat(keys(store)).as("a commit with no flush since their sends").containsExactly(0L, 1L);

        producer.flushed();
        ((PendingStore) store).commit(Map.of());
        assertThat(keys(store)).as("flushed, no send failed").isEmpty();
    }

    @Test
    void shouldKeepTheRecordsTakenOutAtTheEndOfACommitWhenASendFailedBeforeItsFlush() {
        ProducerFlushes producer = producer();
        producer.sending();
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        punctuate();

        producer.failed();          // a send of the thread failed: its flush proves nothing
        producer.flushed();
        ((PendingStore) store).commit(Map.of());
        assertThat(keys(store)).containsExactly(0L);

        producer.flushed();         // a later clean flush does not answer for a send made before the failure
        ((PendingStore) store).commit(Map.of());
        assertThat(keys(store)).containsExactly(0L);

        ((PendingStore) store).flushCache();    // the commit's flush returned: the task processes again
        punctuate();
        assertThat(keys(store)).isEmpty();
    }

    @Test
    void shouldKeepTheRecordsTakenOutAtTheEndOfACommitWhenTheirProducerIsNotTheOneThatFlushed() {
        producer().sending();
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        punctuate();
        hold(aside, 8);

        ProducerFlushes replaced = producer();   // the thread's producer made again
        replaced.sending();
        punctuate();
        replaced.flushed();
        ((PendingStore) store).commit(Map.of());

        assertThat(keys(store)).as("7 went out on the earlier producer").containsExactly(0L, 1L);
    }

    /**
     * A task moving in a rebalance: its processor closes, then its last commit; the deletes of that commit's end are
     * flushed before the task is handed over, so that its next owner restores none of them.
     */
    @Test
    void shouldFlushTheDeletesOfTheLastCommitOfATaskThatClosed() {
        int[] flushed = {0};
        ProducerFlushes[] producer = new ProducerFlushes[1];
        producer[0] = new ProducerFlushes(() -> {
            flushed[0]++;
            producer[0].flushed();
        });
        producer[0].sending();
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        hold(aside, 8);
        punctuate();

        aside.close();
        producer[0].flushed();                      // the commit's own flush
        ((PendingStore) store).commit(Map.of());

        assertThat(keys(store)).isEmpty();
        assertThat(flushed[0]).as("the deletes flushed at once").isEqualTo(1);
    }

    /** The state updater's thread commits the stores of tasks restoring and of standbys: the hook does nothing there. */
    @Test
    void shouldDeleteNothingAtTheEndOfACommitOnAnotherThreadThanTheTasks() throws InterruptedException {
        ProducerFlushes producer = producer();
        producer.sending();
        KeyValueStore<Long, Record<byte[], byte[]>> store = countingStore();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        punctuate();
        producer.flushed();

        Thread updater = new Thread(() -> ((PendingStore) store).commit(Map.of()));
        updater.start();
        updater.join();
        assertThat(keys(store)).containsExactly(0L);

        ((PendingStore) store).commit(Map.of());
        assertThat(keys(store)).isEmpty();
    }

    /** A producer's flushes whose flush counts itself. */
    private static ProducerFlushes producer() {
        ProducerFlushes[] producer = new ProducerFlushes[1];
        producer[0] = new ProducerFlushes(() -> producer[0].flushed());
        return producer[0];
    }

    /** A value refused by its write (after its check) is a dead letter like one the check refused, not stamped again and again. */
    @Test
    void shouldTakeOutARecordWhoseWriteRefusesItAsADeadLetter() {
        KeyValueStore<Long, Record<byte[], byte[]>> store = store();
        SetAside aside = setAside(new PauseBuffer(store));
        hold(aside, 7);
        hold(aside, 8);
        refuseOnWrite = true;

        assertThat(org.assertj.core.api.Assertions.catchThrowable(this::punctuate)).isInstanceOf(SetAsideRefused.class);
        refuseOnWrite = false;
        punctuate();

        assertThat(stamped).containsExactly(8L);
        assertThat(aside.isEmpty()).isTrue();
    }

    /**
     * A record restored set aside (the task's previous incarnation held it) and refused on its way out goes to the
     * dead-letter topic naming the configured input topic, though this incarnation set nothing aside itself (it once named
     * none: the topic came from the first record set aside).
     */
    @Test
    void shouldNameTheInputTopicInTheDeadLetterOfARestoredRecordRefusedOnItsWayOut() {
        KeyValueStore<Long, Record<byte[], byte[]>> store = store();
        store.put(5L, record(105));
        SetAside aside = setAside(new PauseBuffer(store), REFUSING);
        aside.restored(false);

        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(this::punctuate);

        assertThat(thrown).isInstanceOf(SetAsideRefused.class);
        SetAsideRefused refused = (SetAsideRefused) thrown;
        assertThat(refused.context(null).topic()).isEqualTo("in");
        assertThat(refused.context(null).offset()).isEqualTo(105);
        assertThat(stamped).isEmpty();
    }

    /** Runs every punctuation scheduled so far, cancelled or not: Kafka Streams may still run one whose task moved on. */
    private void punctuate() {
        context.scheduledPunctuators().forEach(p -> p.getPunctuator().punctuate(0));
    }

    private void hold(SetAside aside, long offset) {
        context.setRecordMetadata("in", PARTITION, offset);
        aside.hold(new Record<>(new byte[0], ("v" + offset).getBytes(), 0L));
    }

    /** A record as a previous incarnation set it aside without provenance: its input offset in the store's own header. */
    private Record<byte[], byte[]> record(long offset) {
        Record<byte[], byte[]> record = new Record<>(new byte[0], ("v" + offset).getBytes(), 0L);
        context.setRecordMetadata("in", PARTITION, offset);
        new SourceHeaders(false, false, PARTITION).setAside(record.headers(), context.recordMetadata().orElseThrow());
        return record;
    }

    private SetAside setAside(PauseBuffer paused) {
        return setAside(paused, null);
    }

    private SetAside setAside(PauseBuffer paused, ValueField values) {
        SourceHeaders sources = new SourceHeaders(false, false, PARTITION);
        TaskStats stats = new TaskStats(PARTITION, 1, 0, () -> 0L);
        StampedCheck check = new StampedCheck(PARTITION, "in", null, paused, stats, null, false);
        return new SetAside(context, paused, sources, check, values, stats, PARTITION, false, "in", new SetAside.Stamping() {
            @Override
            public boolean leadExceeded() {
                return false;
            }

            @Override
            public boolean mustWait() {
                return false;
            }

            @Override
            public void waitEnded() {
            }

            @Override
            public void firstHeld() {
            }

            @Override
            public void stamp(Record<byte[], byte[]> record, Object plan) {
                if (refuseOnWrite) {
                    throw new io.snowstamp.BadRecordException(io.snowstamp.BadRecordException.Code.INVALID_VALUE, "refused on write");
                }
                stamped.add(Long.parseLong(new String(record.value()).substring(1)));
            }
        });
    }

    private KeyValueStore<Long, Record<byte[], byte[]>> store() {
        return opened(pendingStore().build());
    }

    /** The store as at-least-once builds it: counting its task's commits. */
    private KeyValueStore<Long, Record<byte[], byte[]>> countingStore() {
        return opened(PendingStore.builder(pendingStore()).build());
    }

    private static StoreBuilder<KeyValueStore<Long, Record<byte[], byte[]>>> pendingStore() {
        return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(Names.PENDING_STORE), Serdes.Long(), new PendingRecordSerde())
                .withLoggingDisabled();
    }

    private KeyValueStore<Long, Record<byte[], byte[]>> opened(KeyValueStore<Long, Record<byte[], byte[]>> store) {
        store.init(context.getStateStoreContext(), store);
        return store;
    }

    /** The keys in {@code store}, in its order. */
    static <K> List<K> keys(KeyValueStore<K, ?> store) {
        List<K> keys = new ArrayList<>();
        try (var all = store.all()) {
            all.forEachRemaining(entry -> keys.add(entry.key));
        }
        return keys;
    }
}
