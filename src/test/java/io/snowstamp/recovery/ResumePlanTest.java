package io.snowstamp.recovery;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ResumePlanTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final String FP = LAYOUT.fingerprint();
    private static final long T = 300_000_000L;
    private static final long NOW = 1_800_000_000_000L;

    private static long id(long time, long worker, long sequence) {
        return LAYOUT.encode(time, 0, worker, sequence);
    }

    private static WorkerState state(long worker, long epoch, long lastId, long reservedUntil) {
        return new WorkerState(FP, worker, epoch, "h/t", 1, 2, lastId, reservedUntil);
    }

    @Test
    void shouldResumeAboveTheHigherOfChangelogAndOutput() {
        Map<Integer, WorkerState> source = Map.of(0, state(0, 4, id(T, 0, 3), id(T + 1000, 0, 4095)), 1, state(1, 2, id(T, 1, 3), -1));
        Map<Integer, Long> output = Map.of(0, id(T + 10, 0, 0), 1, id(T + 10, 1, 0), 2, id(T, 2, 7));

        ResumePlan plan = ResumePlan.plan(4, source, output, Map.of(), LAYOUT, 0, NOW);

        assertThat(plan.rows()).extracting(ResumePlan.Row::resume)
                .containsExactly(id(T + 1000, 0, 4095), id(T + 10, 1, 0), id(T, 2, 7), -1L);
        assertThat(plan.rows()).extracting(ResumePlan.Row::action).containsExactly(ResumePlan.Action.SEED,
                ResumePlan.Action.SEED, ResumePlan.Action.SEED, ResumePlan.Action.NONE);
        assertThat(plan.seeds().get(0)).isEqualTo(new WorkerState(FP, 0, 4, "recover", NOW, NOW, id(T + 1000, 0, 4095), id(T + 1000, 0, 4095)));
        assertThat(plan.seeds().get(2).epoch()).isZero();
        assertThat(plan.nothingIssued()).isFalse();
    }

    @Test
    void shouldKeepATargetThatIsAlreadyHighEnoughAndNeverLowerItsEpoch() {
        Map<Integer, Long> output = Map.of(0, id(T, 0, 0), 1, id(T, 1, 0));
        Map<Integer, WorkerState> target = Map.of(0, state(0, 6, id(T, 0, 0), -1), 1, state(1, 6, id(T - 1, 1, 0), -1));

        ResumePlan plan = ResumePlan.plan(2, Map.of(), output, target, LAYOUT, 0, NOW);

        assertThat(plan.rows()).extracting(ResumePlan.Row::action).containsExactly(ResumePlan.Action.KEEP, ResumePlan.Action.SEED);
        assertThat(plan.seeds()).containsOnlyKeys(1);
        assertThat(plan.seeds().get(1).epoch()).isEqualTo(6);
    }

    @Test
    void shouldUseTheWorkerOffset() {
        ResumePlan plan = ResumePlan.plan(2, Map.of(), Map.of(1, id(T, 9, 0)), Map.of(), LAYOUT, 8, NOW);

        assertThat(plan.rows()).extracting(ResumePlan.Row::worker).containsExactly(8L, 9L);
        assertThat(plan.seeds().get(1).workerId()).isEqualTo(9);
    }

    @Test
    void shouldSayWhenNothingWasEverIssued() {
        assertThat(ResumePlan.plan(3, Map.of(), Map.of(0, -1L), Map.of(), LAYOUT, 0, NOW).nothingIssued()).isTrue();
    }

    @Test
    void shouldRefuseStateOfAnotherLayoutOrWorkerOrPartition() {
        String sonyflake = IdLayout.preset("sonyflake").fingerprint();
        WorkerState other = new WorkerState(sonyflake, 0, 1, "h", 1, 1, 5, 5);
        assertThatThrownBy(() -> ResumePlan.plan(1, Map.of(0, other), Map.of(), Map.of(), LAYOUT, 0, NOW))
                .isInstanceOf(ImportRefusedException.LayoutMismatch.class)
                .hasMessageStartingWith("partition 0 of the source changelog has ID layout " + sonyflake + " but the configured layout is " + FP);
        assertThatThrownBy(() -> ResumePlan.plan(1, Map.of(), Map.of(), Map.of(0, state(3, 1, 5, 5)), LAYOUT, 0, NOW))
                .hasMessageStartingWith("partition 0 of the target changelog has worker 3 but id.worker-offset=0 gives worker 0");
        assertThatThrownBy(() -> ResumePlan.plan(1, Map.of(1, state(1, 1, 5, 5)), Map.of(), Map.of(), LAYOUT, 0, NOW))
                .hasMessageStartingWith("the source changelog has state for partition 1 but the output topic has 1 partitions");
    }
}
