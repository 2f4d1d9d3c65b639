package io.snowstamp.ownership;

import org.apache.kafka.streams.processor.Punctuator;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class PreCommitHooksTest {
    private final PreCommitHooks hooks = new PreCommitHooks(true, () -> false);
    private final Punctuations punctuations = new Punctuations();

    /** A task's hook: {@code write} records its name, {@code settled} when its state names its last ID already. */
    private static class TaskHook implements PreCommitHooks.Hook {
        final String name;
        final List<String> written;
        boolean settled;

        TaskHook(String name, List<String> written) {
            this.name = name;
            this.written = written;
        }

        @Override
        public void write() {
            written.add(name);
        }

        @Override
        public boolean settled() {
            return settled;
        }
    }

    /** Wall-clock punctuations as Kafka Streams runs them for a task: the scheduled ones, cancelled or not. */
    private static final class Punctuations implements PreCommitHooks.Scheduler {
        final List<Punctuator> scheduled = new ArrayList<>();
        final List<Boolean> cancelled = new ArrayList<>();

        @Override
        public org.apache.kafka.streams.processor.Cancellable schedule(Duration interval, Punctuator punctuator) {
            assertThat(interval).isEqualTo(PreCommitHooks.STOP_CHECK);
            int index = scheduled.size();
            scheduled.add(punctuator);
            cancelled.add(false);
            return () -> cancelled.set(index, true);
        }

        int live() {
            return (int) cancelled.stream().filter(c -> !c).count();
        }

        /** Every punctuation not cancelled runs once. */
        void tick() {
            for (int i = 0; i < scheduled.size(); i++) {
                if (!cancelled.get(i)) {
                    scheduled.get(i).punctuate(0);
                }
            }
        }
    }

    @Test
    void shouldRunEveryPendingHookOfTheThreadAtTheFirstFlushAndNoneAtTheNext() {
        List<String> ran = new ArrayList<>();
        hooks.pending(new TaskHook("task 0", ran), punctuations);
        hooks.pending(new TaskHook("task 1", ran), punctuations);
        hooks.pending(new TaskHook("task 2", ran), punctuations);

        hooks.runPending();     // the first task's flush of a commit: all three tasks' writes go out before it
        assertThat(ran).containsExactly("task 0", "task 1", "task 2");

        hooks.runPending();     // the next tasks' flushes of the same commit: nothing left to send
        assertThat(ran).hasSize(3);
        assertThat(punctuations.scheduled).as("every commit writes them: no sentinel").isEmpty();
        assertThat(hooks.unwritten()).as("a stop waits for nothing: its last commit writes them").isZero();
    }

    @Test
    void shouldLeaveTheHooksOfAnotherStreamThreadToThatThread() throws Exception {
        List<String> ran = new ArrayList<>();
        Thread other = new Thread(() -> hooks.pending(new TaskHook("other", ran), punctuations));
        other.start();
        other.join();

        hooks.runPending();     // this thread's commit never writes the state of another thread's task
        assertThat(ran).isEmpty();
    }

    @Test
    void shouldRunAHookThatAHookAddsAtTheNextFlush() {
        AtomicInteger ran = new AtomicInteger();
        PreCommitHooks.Hook second = new TaskHook("second", new ArrayList<>()) {
            @Override
            public void write() {
                ran.incrementAndGet();
            }
        };
        hooks.pending(new TaskHook("first", new ArrayList<>()) {
            @Override
            public void write() {
                ran.incrementAndGet();
                hooks.pending(second, punctuations);
            }
        }, punctuations);

        hooks.runPending();
        assertThat(ran).hasValue(1);
        hooks.runPending();
        assertThat(ran).hasValue(2);
    }

    @Test
    void shouldKeepTheHooksForTheCommitsOfACleanStopWhereCommitsNeedNoExactLastId() {
        AtomicBoolean stopping = new AtomicBoolean();
        PreCommitHooks atStop = new PreCommitHooks(false, stopping::get);
        List<String> ran = new ArrayList<>();
        atStop.pending(new TaskHook("task 0", ran), punctuations);

        atStop.runPending();    // a periodic commit: the state is not written for it
        assertThat(ran).isEmpty();
        assertThat(atStop.unwritten()).isEqualTo(1);

        stopping.set(true);
        atStop.runPending();    // the first commit of the clean stop carries the exact last ID
        assertThat(ran).containsExactly("task 0");
        atStop.runPending();
        assertThat(ran).hasSize(1);
        assertThat(atStop.unwritten()).isZero();
    }

    @Test
    void shouldWriteEveryWaitingLastIdBeforeTheThreadsNextPollOnceTheInstanceStopsWithNoPunctuationWhileRunning() {
        AtomicBoolean stopping = new AtomicBoolean();
        PreCommitHooks atStop = new PreCommitHooks(false, stopping::get);
        atStop.beforePoll();    // the stream thread polls through the stamper's consumer wrapper
        List<String> ran = new ArrayList<>();
        TaskHook zero = new TaskHook("task 0", ran);
        atStop.pending(zero, punctuations);
        atStop.pending(new TaskHook("task 1", ran), punctuations);
        atStop.pending(new TaskHook("task 2", ran), punctuations);
        assertThat(punctuations.scheduled).as("while running: no punctuation, so no commit of its own").isEmpty();

        atStop.beforePoll();
        assertThat(ran).isEmpty();
        // a rebalance closes the task that issued first: the others still wait, and are still written at the stop
        atStop.closed(zero);
        assertThat(atStop.unwritten()).isEqualTo(2);

        // the stop: no task processed a record since its last commit, so no flush would run the hooks
        stopping.set(true);
        atStop.beforePoll();
        assertThat(ran).containsExactly("task 1", "task 2");
        assertThat(atStop.unwritten()).isZero();
        atStop.beforePoll();
        assertThat(ran).hasSize(2);
    }

    @Test
    void shouldWriteEveryWaitingLastIdAtTheSentinelsFirstPunctuationOnceTheInstanceStopsWithoutAnyFlush() {
        AtomicBoolean stopping = new AtomicBoolean();
        PreCommitHooks atStop = new PreCommitHooks(false, stopping::get);
        List<String> ran = new ArrayList<>();
        atStop.pending(new TaskHook("task 0", ran), punctuations);
        atStop.pending(new TaskHook("task 1", ran), punctuations);
        assertThat(punctuations.live()).as("one sentinel for the thread, not one per task").isEqualTo(1);

        punctuations.tick();    // running, nothing settled: the hooks wait
        assertThat(ran).isEmpty();
        assertThat(atStop.unwritten()).isEqualTo(2);

        // the stop: no task processed a record since its last commit, so no flush would run the hooks
        stopping.set(true);
        punctuations.tick();
        assertThat(ran).containsExactly("task 0", "task 1");
        assertThat(atStop.unwritten()).isZero();
        assertThat(punctuations.live()).as("nothing left to wait for: the sentinel ends").isZero();
    }

    @Test
    void shouldEndTheSentinelOnceEveryTaskSettledAndStartAnotherAtTheNextId() {
        PreCommitHooks atStop = new PreCommitHooks(false, () -> false);
        List<String> ran = new ArrayList<>();
        TaskHook zero = new TaskHook("task 0", ran);
        TaskHook one = new TaskHook("task 1", ran);
        atStop.pending(zero, punctuations);
        atStop.pending(one, punctuations);

        zero.settled = true;    // its heartbeat wrote its last ID
        punctuations.tick();
        assertThat(atStop.unwritten()).isEqualTo(1);
        assertThat(punctuations.live()).isEqualTo(1);

        one.settled = true;
        punctuations.tick();
        assertThat(atStop.unwritten()).isZero();
        assertThat(punctuations.live()).as("an idle instance commits nothing for the sentinel").isZero();
        assertThat(ran).as("settled hooks are dropped, not written").isEmpty();

        zero.settled = false;
        atStop.pending(zero, punctuations);
        assertThat(punctuations.live()).isEqualTo(1);
    }

    @Test
    void shouldHandTheSentinelToAnotherTaskWhenItsTaskClosesWhileOthersWait() {
        AtomicBoolean stopping = new AtomicBoolean();
        PreCommitHooks atStop = new PreCommitHooks(false, stopping::get);
        List<String> ran = new ArrayList<>();
        TaskHook zero = new TaskHook("task 0", ran);
        TaskHook one = new TaskHook("task 1", ran);
        atStop.pending(zero, punctuations);
        atStop.pending(one, punctuations);

        atStop.closed(zero);    // revoked: its punctuations end with it, task 1 still waits
        assertThat(punctuations.live()).isZero();
        assertThat(atStop.unwritten()).as("a closed task's hook no longer waits").isEqualTo(1);

        atStop.cover(one, punctuations);     // task 1's heartbeat
        assertThat(punctuations.live()).isEqualTo(1);
        stopping.set(true);
        punctuations.tick();
        assertThat(ran).containsExactly("task 1");
    }

    @Test
    void shouldNotCountTheHooksOfAStreamThreadThatEnded() throws Exception {
        PreCommitHooks atStop = new PreCommitHooks(false, () -> false);
        Thread replaced = new Thread(() -> atStop.pending(new TaskHook("lost", new ArrayList<>()), (interval, p) -> () -> { }));
        replaced.start();
        replaced.join();
        assertThat(atStop.unwritten()).as("a replaced stream thread's tasks closed with it: a stop waits for none").isZero();
    }
}
