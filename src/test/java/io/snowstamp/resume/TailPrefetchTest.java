package io.snowstamp.resume;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The batching rules of {@link TailPrefetch}, against a recording fence and reader: a result is
 * used once, only by the task it was read for, and a partition that is not ready (not restored
 * for its current task, or given up since) is never fenced nor read in a batch.
 */
class TailPrefetchTest {
    private static final long DATACENTER = 0;
    private static final long WORKER_OFFSET = 100;

    /** What the prefetch asked for, in order: "fence [..]", "batch [..]", "single p", "fence-one p". */
    private final List<String> calls = new ArrayList<>();
    private final AtomicLong nanos = new AtomicLong();
    /** Runs inside the batch read, to interleave restores and releases with a batch in flight. */
    private Consumer<Set<Integer>> duringBatch = partitions -> { };
    /** What the batch read throws; null: it reads. */
    private RuntimeException batchFailure;

    private final TailPrefetch prefetch = new TailPrefetch(
            (partition, datacenter, worker) -> {
                calls.add("single " + partition);
                return result(-7);
            },
            (workers, datacenter) -> {
                calls.add("batch " + new TreeSet<>(workers.keySet()));
                duringBatch.accept(workers.keySet());
                if (batchFailure != null) {
                    throw batchFailure;
                }
                Map<Integer, TailProbe.Result> results = new HashMap<>();
                workers.forEach((partition, worker) -> results.put(partition, result(worker * 1000)));
                return results;
            },
            partitions -> calls.add("fence " + new TreeSet<>(partitions)),
            partition -> WORKER_OFFSET + partition, DATACENTER, TimeUnit.MINUTES.toNanos(2), nanos::get);

    private static TailProbe.Result result(long highestId) {
        return new TailProbe.Result(highestId, 1, 0, 1, 0);
    }

    private TailProbe.Result start(int partition) {
        prefetch.fence(partition);
        return prefetch.highestIssued(partition, DATACENTER, WORKER_OFFSET + partition);
    }

    /** Restored, and their committed offsets fetched (as the main consumer does for every starting task in one request). */
    private void restored(int... partitions) {
        for (int partition : partitions) {
            prefetch.restoreStarted(partition);
            prefetch.restoreEnded(partition);
        }
        prefetch.committedFetched(java.util.Arrays.stream(partitions).boxed().toList());
    }

    /**
     * Issue 39 item 6: under exactly-once a predecessor frozen after its input offsets were accepted holds them pending
     * until it commits or aborts, and the committed-offset fetch waits for that; a tail read before the partition's fetch
     * could miss what it then commits. A restored partition whose committed offsets were not fetched yet is read at its
     * own start, after its own fetch, never early in another task's batch.
     */
    @Test
    void shouldReadEarlyOnlyThePartitionsWhoseCommittedOffsetsWereFetched() {
        restored(0, 1);
        prefetch.restoreStarted(2);
        prefetch.restoreEnded(2);           // restored, its committed offsets not fetched yet
        prefetch.restoreStarted(3);
        prefetch.restoreEnded(3);

        start(0);
        assertThat(calls).containsExactly("fence [0, 1]", "batch [0, 1]");
        calls.clear();

        prefetch.committedFetched(java.util.List.of(2, 3));     // their fetch answered: the pending offsets are resolved
        start(2);
        start(3);
        assertThat(calls).containsExactly("fence [2, 3]", "batch [2, 3]");
    }

    @Test
    void shouldForgetAFetchOfAnEarlierAssignmentOfThePartition() {
        prefetch.restoreStarted(5);
        prefetch.restoreEnded(5);
        prefetch.committedFetched(java.util.List.of(5));
        prefetch.restoreStarted(5);         // moved away and back: a new task, whose offsets were not fetched yet
        prefetch.restoreEnded(5);
        restored(6);

        start(6);

        assertThat(calls).containsExactly("fence [6]", "batch [6]");
        calls.clear();
        start(5);                           // at its own start, after its own fetch
        assertThat(calls).containsExactly("fence [5]", "batch [5]");
    }

    @Test
    void shouldFenceThenReadEveryReadyPartitionOnceAndServeEachTaskItsOwnResult() {
        restored(0, 1, 2, 3);

        for (int partition = 0; partition < 4; partition++) {
            assertThat(start(partition).highestId()).isEqualTo((WORKER_OFFSET + partition) * 1000);
        }

        assertThat(calls).containsExactly("fence [0, 1, 2, 3]", "batch [0, 1, 2, 3]");
        assertThat(prefetch.stats()).isEqualTo(new TailPrefetch.Stats(1, 4, 4, 0));
    }

    @Test
    void shouldUseAResultOnlyOnce() {
        restored(0, 1);
        start(0);
        calls.clear();

        prefetch.highestIssued(0, DATACENTER, WORKER_OFFSET);      // the same task asks again (or a new one, never restored)

        assertThat(calls).containsExactly("single 0");
    }

    @Test
    void shouldNeverFenceNorReadInABatchAPartitionThatIsNotReady() {
        restored(0, 1);
        prefetch.restoreStarted(2);         // restoring: assigned, but its task has not restored yet
        prefetch.restoreStarted(3);
        prefetch.restoreEnded(3);
        prefetch.released(3);               // restored, then given up before its task started

        start(0);
        start(5);                           // never restored here: the per-task path, alone

        assertThat(calls).containsExactly("fence [0, 1]", "batch [0, 1]", "fence [5]", "single 5");
    }

    @Test
    void shouldDropEverythingReadWhenTheInstanceRebalances() {
        restored(0, 1, 2);
        start(0);
        restored(4);
        prefetch.dropAll();
        calls.clear();

        start(1);       // read before the rebalance: read again, alone
        start(4);       // ready before the rebalance: read alone too

        assertThat(calls).containsExactly("fence [1]", "single 1", "fence [4]", "single 4");
    }

    @Test
    void shouldNotUseAReadOfAnEarlierAssignmentOfThePartition() {
        restored(0, 1);
        start(0);
        prefetch.restoreStarted(1);         // partition 1 moved away and back: a new task restores
        calls.clear();

        start(1);                           // not restored yet for this task: alone

        assertThat(calls).containsExactly("fence [1]", "single 1");
        prefetch.restoreEnded(1);
        calls.clear();
        start(1);
        assertThat(calls).containsExactly("fence [1]", "batch [1]");
    }

    @Test
    void shouldKeepNothingOfABatchForAPartitionRestartedOrReleasedWhileItRan() {
        restored(0, 1, 2);
        duringBatch = partitions -> {
            prefetch.restoreStarted(1);     // the state updater restarts partition 1's restore meanwhile
            prefetch.restoreEnded(1);
        };
        start(0);
        duringBatch = partitions -> { };
        calls.clear();

        start(1);       // ready again, for a new task: a batch of its own, not the old read
        start(2);

        assertThat(calls).containsExactly("fence [1]", "batch [1]");
        assertThat(prefetch.stats().served()).isEqualTo(3);
    }

    @Test
    void shouldMakeAReleaseWaitForTheBatchInFlight() throws Exception {
        restored(0, 1);
        CountDownLatch inBatch = new CountDownLatch(1);
        CountDownLatch finishBatch = new CountDownLatch(1);
        duringBatch = partitions -> {
            inBatch.countDown();
            try {
                finishBatch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        CompletableFuture<Void> batch = CompletableFuture.runAsync(() -> start(0));
        assertThat(inBatch.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> prefetch.released(1));
        Thread.sleep(200);
        assertThat(release).as("partition 1 given up while a batch may still fence it").isNotDone();
        finishBatch.countDown();
        batch.get(10, TimeUnit.SECONDS);
        release.get(10, TimeUnit.SECONDS);

        calls.clear();
        start(1);
        assertThat(calls).containsExactly("fence [1]", "single 1");
    }

    @Test
    void shouldFenceAndReadAloneWhenTheBatchFails() {
        restored(0, 1);
        batchFailure = new IllegalStateException("broker gone");

        TailProbe.Result result = start(0);

        assertThat(result.highestId()).isEqualTo(-7);
        assertThat(calls).containsExactly("fence [0, 1]", "batch [0, 1]", "fence [0]", "single 0");
        batchFailure = null;
        calls.clear();
        start(1);           // left the batch that failed: alone
        assertThat(calls).containsExactly("fence [1]", "single 1");
    }

    /** The batch's WARN names the setting to raise when the read ran out of time, and only then (issue 41). */
    @Test
    void shouldNameTheTimeoutInTheWarningOnlyWhenTheBatchRanOutOfTime() throws Exception {
        var lines = io.snowstamp.testing.Logback.capture(TailPrefetch.class, () -> {
            restored(0, 1);
            batchFailure = new org.apache.kafka.common.errors.TimeoutException("2 not read to their end in 60 s");
            start(0);
            restored(2, 3);
            batchFailure = new IllegalStateException("partition 3 of events.stamped does not exist");
            start(2);
        });

        assertThat(lines).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).containsExactly(
                "cannot read the tails of 2 partitions in one go (2 not read to their end in 60 s); each of their tasks reads its own"
                        + " at its start (it ran out of time: raise recovery.tail-guard-timeout)",
                "cannot read the tails of 2 partitions in one go (partition 3 of events.stamped does not exist); each of their tasks"
                        + " reads its own at its start");
    }

    /** operations.md: tasks that start together share one read of their tails, logged in one INFO line (issue 41). */
    @Test
    void shouldLogOneInfoLinePerBatchOfTailsAndNoneForATaskStartingAlone() throws Exception {
        var lines = io.snowstamp.testing.Logback.capture(TailPrefetch.class, () -> {
            restored(0, 1, 2);
            for (int partition = 0; partition < 3; partition++) {
                start(partition);
            }
            restored(3);
            start(3);
        });

        assertThat(io.snowstamp.testing.Logback.events(lines, "tails-prefetched"))
                .as("the batch of three, once; 3 alone not at INFO (its own start's line says enough)")
                .containsExactly(Map.of("event", "tails-prefetched", "partitions", 3, "level", "INFO"));
    }

    @Test
    void shouldReadAgainWhenTheWorkerDiffersOrTheReadIsOld() {
        restored(0, 1);
        start(0);
        calls.clear();

        prefetch.highestIssued(1, DATACENTER, 999);     // another worker than the batch read for
        assertThat(calls).containsExactly("single 1");

        restored(2, 3);
        start(2);
        nanos.addAndGet(TimeUnit.MINUTES.toNanos(3));
        calls.clear();
        start(3);
        assertThat(calls).containsExactly("single 3");
    }
}
