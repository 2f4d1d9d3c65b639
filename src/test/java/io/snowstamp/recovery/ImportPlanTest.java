package io.snowstamp.recovery;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ImportPlanTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final String FP = LAYOUT.fingerprint();
    private static final String TOPIC = "orders-worker-state-changelog";
    private static final long T = 200_000_000L;

    private static long id(long time, long worker, long sequence) {
        return LAYOUT.encode(time, 0, worker, sequence);
    }

    /** Partition p's state with marks at time {@code time}: lastId (time, p, 0), reservedUntil (time + 1 s, p, max). */
    private static WorkerState state(int partition, long epoch, long time) {
        return new WorkerState(FP, partition, epoch, "h/t", 1, 2, id(time, partition, 0), id(time + 1000, partition, 4095));
    }

    private static StateFile file(String layout, Map<Integer, WorkerState> states) {
        return new StateFile(new StateFile.Header("orders", "2026-01-01T00:00:00.000Z", layout), new TreeMap<>(states));
    }

    @Test
    void shouldWriteNewAndHigherStatesKeepOthersAndSkipEqualOnes() {
        StateFile export = file(FP, Map.of(0, state(0, 4, T + 50), 1, state(1, 2, T), 2, state(2, 1, T)));
        Map<Integer, WorkerState> current = Map.of(0, state(0, 3, T), 1, state(1, 2, T), 3, state(3, 9, T));

        ImportPlan plan = ImportPlan.plan(export, current, LAYOUT, 0, 4, TOPIC);

        assertThat(plan.rows()).extracting(ImportPlan.Row::partition, ImportPlan.Row::action).containsExactly(
                org.assertj.core.groups.Tuple.tuple(0, ImportPlan.Action.WRITE),
                org.assertj.core.groups.Tuple.tuple(1, ImportPlan.Action.UNCHANGED),
                org.assertj.core.groups.Tuple.tuple(2, ImportPlan.Action.WRITE),
                org.assertj.core.groups.Tuple.tuple(3, ImportPlan.Action.KEEP));
        assertThat(plan.writes()).containsOnlyKeys(0, 2).containsEntry(0, state(0, 4, T + 50)).containsEntry(2, state(2, 1, T));
        assertThat(plan.rows().get(3).after()).isEqualTo(state(3, 9, T));
    }

    @Test
    void shouldCallAPartitionUnchangedWhenOnlyTheLeaseDetailsDifferAsWhileTheApplicationRuns() {
        // exported a moment ago; since then the running task has heartbeated and written its state again
        WorkerState exported = state(0, 3, T).withWrittenAt(10);
        WorkerState live = exported.withHeartbeat(99).withWrittenAt(20);
        WorkerState liveLower = state(1, 3, T).withHeartbeat(99);

        ImportPlan plan = ImportPlan.plan(file(FP, Map.of(0, exported, 1, state(1, 3, T + 5))), Map.of(0, live, 1, liveLower),
                LAYOUT, 0, 2, TOPIC);

        assertThat(plan.rows()).extracting(ImportPlan.Row::action).containsExactly(ImportPlan.Action.UNCHANGED, ImportPlan.Action.WRITE);
        assertThat(plan.writes()).containsOnlyKeys(1);
    }

    @Test
    void shouldNeverLowerTheEpoch() {
        ImportPlan plan = ImportPlan.plan(file(FP, Map.of(0, state(0, 2, T + 5))), Map.of(0, state(0, 7, T)), LAYOUT, 0, 1, TOPIC);

        assertThat(plan.writes().get(0).epoch()).isEqualTo(7);
        assertThat(plan.writes().get(0).highWaterMark()).isEqualTo(state(0, 2, T + 5).highWaterMark());
    }

    @Test
    void shouldRefuseToLowerAnyMarkNamingEveryPartitionAndBothValues() {
        StateFile export = file(FP, Map.of(0, state(0, 5, T), 1, state(1, 5, T - 1), 2, state(2, 5, T - 2000)));
        Map<Integer, WorkerState> current = Map.of(0, state(0, 5, T), 1, state(1, 5, T), 2, state(2, 5, T));

        assertThatThrownBy(() -> ImportPlan.plan(export, current, LAYOUT, 0, 3, TOPIC))
                .isInstanceOfSatisfying(ImportRefusedException.LowerMark.class, e -> {
                    assertThat(e.lowerings()).extracting(ImportRefusedException.Lowering::partition).containsExactly(1, 2);
                    assertThat(e.lowerings().get(0).current()).isEqualTo(id(T + 1000, 1, 4095));
                    assertThat(e.lowerings().get(0).proposed()).isEqualTo(id(T + 999, 1, 4095));
                })
                .hasMessageStartingWith("refusing to lower the high-water mark (max of lastId and reservedUntil) of partition 1 from "
                        + id(T + 1000, 1, 4095) + " (2020-01-03T07:33:21Z) to " + id(T + 999, 1, 4095) + " (2020-01-03T07:33:20.999Z), "
                        + "partition 2 from " + id(T + 1000, 2, 4095))
                .hasMessageContaining(TOPIC + " already holds the higher mark");
    }

    @Test
    void shouldRefuseAnotherLayoutInTheHeaderARecordOrTheChangelog() {
        String sonyflake = IdLayout.preset("sonyflake").fingerprint();
        assertThatThrownBy(() -> ImportPlan.plan(file(sonyflake, Map.of()), Map.of(), LAYOUT, 0, 1, TOPIC))
                .isInstanceOfSatisfying(ImportRefusedException.LayoutMismatch.class, e -> {
                    assertThat(e.found()).isEqualTo(sonyflake);
                    assertThat(e.configured()).isEqualTo(FP);
                })
                .hasMessageStartingWith("the file has ID layout " + sonyflake + " but the configured layout is " + FP);
        WorkerState other = new WorkerState(sonyflake, 0, 1, "h", 1, 1, 5, 5);
        assertThatThrownBy(() -> ImportPlan.plan(file(FP, Map.of(0, other)), Map.of(), LAYOUT, 0, 1, TOPIC))
                .hasMessageStartingWith("partition 0 of the file has ID layout " + sonyflake);
        assertThatThrownBy(() -> ImportPlan.plan(file(FP, Map.of(0, state(0, 1, T))), Map.of(0, other), LAYOUT, 0, 1, TOPIC))
                .hasMessageStartingWith("partition 0 of " + TOPIC + " has ID layout " + sonyflake);
    }

    @Test
    void shouldRefuseAPartitionOrWorkerThatDoesNotFitTheConfiguration() {
        assertThatThrownBy(() -> ImportPlan.plan(file(FP, Map.of(4, state(4, 1, T))), Map.of(), LAYOUT, 0, 4, TOPIC))
                .isInstanceOf(ImportRefusedException.class)
                .hasMessageStartingWith("the file has state for partition 4 but the input topic has 4 partitions (0..3)");
        assertThatThrownBy(() -> ImportPlan.plan(file(FP, Map.of(1, state(1, 1, T))), Map.of(), LAYOUT, 16, 4, TOPIC))
                .hasMessageStartingWith("partition 1 of the file has worker 1 but id.worker-offset=16 gives worker 17");
    }
}
