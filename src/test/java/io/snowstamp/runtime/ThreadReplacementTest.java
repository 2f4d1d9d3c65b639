package io.snowstamp.runtime;

import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, the stall watch: "A thread that does not stop within a minute of being replaced stops the stamper
 * (exit 1) — unless a task of the instance made progress meanwhile: then the instance is slow, not stuck, and keeps
 * running". {@code StreamsRunner} closes the stamper with an error on {@link ThreadReplacement.Outcome#STUCK} only.
 */
class ThreadReplacementTest {
    private static final Duration MINUTE = Duration.ofMinutes(1);

    /** Threads whose removal times out from {@code stuckFrom} on (counting removals from 0), running {@code during} meanwhile. */
    private static final class FakeThreads implements ThreadReplacement.Threads {
        final List<String> alive = new ArrayList<>(List.of("t-1", "t-2"));
        final List<Duration> waited = new ArrayList<>();
        int next = 3;
        int removals;
        final int stuckFrom;
        final Runnable during;

        FakeThreads(int stuckFrom, Runnable during) {
            this.stuckFrom = stuckFrom;
            this.during = during;
        }

        @Override
        public int count() {
            return alive.size();
        }

        @Override
        public Optional<String> add() {
            String name = "t-" + next++;
            alive.add(name);
            return Optional.of(name);
        }

        @Override
        public Optional<String> remove(Duration timeout) {
            waited.add(timeout);
            if (removals++ >= stuckFrom) {
                during.run();
                throw new TimeoutException("did not stop");
            }
            return Optional.of(alive.remove(0));
        }
    }

    @Test
    void shouldReplaceEveryThreadNewOneFirst() {
        FakeThreads threads = new FakeThreads(Integer.MAX_VALUE, () -> { });
        List<String> log = new ArrayList<>();
        assertThat(ThreadReplacement.replaceAll(threads, Map::of, MINUTE, (removed, added) -> log.add(removed + "->" + added)))
                .isEqualTo(ThreadReplacement.Outcome.REPLACED);
        assertThat(log).containsExactly("t-1->t-3", "t-2->t-4");
        assertThat(threads.alive).containsExactly("t-3", "t-4");
        assertThat(threads.waited).containsOnly(MINUTE);
    }

    /** Two tasks, keyed by their identity as StreamsRunner keys them, with the counts {@code issued} holds now. */
    private static Supplier<Map<Object, Long>> snapshots(Object taskA, Object taskB, AtomicLong issued) {
        return () -> {
            Map<Object, Long> snapshot = new IdentityHashMap<>();
            snapshot.put(taskA, issued.get());       // a new boxed Long every time above 127, as in production
            snapshot.put(taskB, 5_000L);
            return snapshot;
        };
    }

    @Test
    void shouldCallAThreadThatWillNotStopSlowWhenATaskIssuedMeanwhile() {
        AtomicLong issued = new AtomicLong(1_000);
        FakeThreads threads = new FakeThreads(0, issued::incrementAndGet);     // a task issues while the removal waits
        assertThat(ThreadReplacement.replaceAll(threads, snapshots(new Object(), new Object(), issued), MINUTE, (removed, added) -> { }))
                .isEqualTo(ThreadReplacement.Outcome.SLOW);
    }

    @Test
    void shouldCallAThreadThatWillNotStopStuckWhenNoTaskIssuedMeanwhile() {
        AtomicLong issued = new AtomicLong(1_000);     // above 127: boxed counts are new objects, compared by value
        FakeThreads threads = new FakeThreads(1, () -> { });                   // the second thread will not stop; nothing issued
        assertThat(ThreadReplacement.replaceAll(threads, snapshots(new Object(), new Object(), issued), MINUTE, (removed, added) -> { }))
                .isEqualTo(ThreadReplacement.Outcome.STUCK);
        assertThat(threads.alive).as("the first thread was replaced before").doesNotContain("t-1");
    }

    @Test
    void shouldCallATaskStartedOrClosedProgress() {
        Object a = new Object();
        Map<Object, Long> before = new IdentityHashMap<>(Map.of(a, 1_000L));
        Map<Object, Long> another = new IdentityHashMap<>(Map.of(new Object(), 1_000L));
        assertThat(ThreadReplacement.same(new IdentityHashMap<>(Map.of(a, Long.valueOf(1_000L))), before)).isTrue();
        assertThat(ThreadReplacement.same(another, before)).as("a task closed, another started").isFalse();
        assertThat(ThreadReplacement.same(new IdentityHashMap<>(), before)).as("a task closed").isFalse();
    }
}
