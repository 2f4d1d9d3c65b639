package io.snowstamp.stream;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class PreCommitHooksTest {
    private final PreCommitHooks hooks = new PreCommitHooks(true, () -> false);

    @Test
    void shouldRunEveryPendingHookOfTheThreadAtTheFirstFlushAndNoneAtTheNext() {
        List<String> ran = new ArrayList<>();
        hooks.pending(() -> ran.add("task 0"));
        hooks.pending(() -> ran.add("task 1"));
        hooks.pending(() -> ran.add("task 2"));

        hooks.runPending();     // the first task's flush of a commit: all three tasks' writes go out before it
        assertThat(ran).containsExactly("task 0", "task 1", "task 2");

        hooks.runPending();     // the next tasks' flushes of the same commit: nothing left to send
        assertThat(ran).hasSize(3);
    }

    @Test
    void shouldLeaveTheHooksOfAnotherStreamThreadToThatThread() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        Thread other = new Thread(() -> hooks.pending(ran::incrementAndGet));
        other.start();
        other.join();

        hooks.runPending();     // this thread's commit never writes the state of another thread's task
        assertThat(ran).hasValue(0);
    }

    @Test
    void shouldRunAHookThatAHookAddsAtTheNextFlush() {
        AtomicInteger ran = new AtomicInteger();
        hooks.pending(() -> {
            ran.incrementAndGet();
            hooks.pending(ran::incrementAndGet);
        });

        hooks.runPending();
        assertThat(ran).hasValue(1);
        hooks.runPending();
        assertThat(ran).hasValue(2);
    }

    @Test
    void shouldKeepTheHooksForTheCommitsOfACleanStopWhereCommitsNeedNoExactLastId() {
        java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
        PreCommitHooks atStop = new PreCommitHooks(false, stopping::get);
        AtomicInteger ran = new AtomicInteger();
        atStop.pending(ran::incrementAndGet);

        atStop.runPending();    // a periodic commit: the state is not written for it
        assertThat(ran).hasValue(0);

        stopping.set(true);
        atStop.runPending();    // the first commit of the clean stop carries the exact last ID
        assertThat(ran).hasValue(1);
        atStop.runPending();
        assertThat(ran).hasValue(1);
    }
}
