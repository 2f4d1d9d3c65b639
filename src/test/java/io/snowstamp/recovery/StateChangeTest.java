package io.snowstamp.recovery;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StateChangeTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final String FP = LAYOUT.fingerprint();
    private static final long T = 100_000_000L;       // time units (ms) since the epoch

    private static long id(long time, long sequence) {
        return LAYOUT.encode(time, 0, 3, sequence);
    }

    private static WorkerState state(long epoch, String holder, long heartbeat, long lastId, long reservedUntil) {
        return new WorkerState(FP, 3, epoch, holder, 1_000, heartbeat, lastId, reservedUntil);
    }

    @Test
    void shouldDescribeTheFirstRecord() {
        StateChange change = StateChange.between(null, state(1, "a/t1", 5, id(T, 0), id(T + 1000, 4095)), LAYOUT);

        assertThat(change.kinds()).containsExactly("first");
        assertThat(change.description()).startsWith("first state: epoch 1 held by a/t1, lastId " + id(T, 0) + " (2020-01-02T03:46:40Z)")
                .endsWith("reservedUntil " + id(T + 1000, 4095) + " (2020-01-02T03:46:41Z)");
    }

    @Test
    void shouldNameANewLeaseWithTheOldAndNewHolder() {
        WorkerState before = state(1, "a/t1", 5, id(T, 0), id(T + 1000, 4095));
        WorkerState after = state(2, "b/t1", 9, id(T, 0), id(T + 1000, 4095));

        StateChange change = StateChange.between(before, after, LAYOUT);

        assertThat(change.kinds()).containsExactly("lease");
        assertThat(change.description()).isEqualTo("new lease: epoch 1 -> 2 taken by b/t1 (was a/t1)");
        assertThat(StateChange.between(before, state(2, "a/t1", 9, id(T, 0), id(T + 1000, 4095)), LAYOUT).description())
                .isEqualTo("new lease: epoch 1 -> 2 taken by a/t1 (same holder)");
    }

    @Test
    void shouldMeasureJumpsOfTheMarksInTime() {
        WorkerState before = state(2, "a/t1", 5, id(T, 0), id(T + 1000, 4095));
        WorkerState after = state(2, "a/t1", 5, id(T + 2500, 7), id(T + 3500, 4095));

        StateChange change = StateChange.between(before, after, LAYOUT);

        assertThat(change.kinds()).containsExactly("lastId", "reservedUntil");
        assertThat(change.description()).isEqualTo("lastId +2500ms to " + id(T + 2500, 7) + " (2020-01-02T03:46:42.500Z); "
                + "reservedUntil +2500ms to " + id(T + 3500, 4095) + " (2020-01-02T03:46:43.500Z)");
    }

    @Test
    void shouldCallAHeartbeatAHeartbeat() {
        WorkerState before = state(2, "a/t1", 5_000, id(T, 0), id(T + 1000, 4095));

        StateChange change = StateChange.between(before, before.withHeartbeat(10_000), LAYOUT);

        assertThat(change.kinds()).containsExactly("heartbeat");
        assertThat(change.description()).isEqualTo("heartbeat +5000ms");
        assertThat(StateChange.between(before, before, LAYOUT).kinds()).containsExactly("none");
    }

    @Test
    void shouldFlagWhatTheStamperNeverDoes() {
        WorkerState before = state(3, "a/t1", 5, id(T + 10, 0), id(T + 1000, 4095));
        WorkerState after = new WorkerState("t39.d0.w16.s8.u10ms.e1577836800000.low", 4, 2, "x/y", 1_000, 5, id(T, 0), id(T + 1000, 4095));

        StateChange change = StateChange.between(before, after, LAYOUT);

        assertThat(change.kinds()).containsExactly("layout", "worker", "epoch-back", "lastId-back");
        assertThat(change.description()).contains("epoch went BACK 3 -> 2", "lastId went BACK -10ms to " + id(T, 0),
                "worker 3 -> 4", "layout " + FP + " -> t39.");
    }

    @Test
    void shouldShowLongJumpsInTheLargestUnits() {
        assertThat(StateChange.signedMillis(9_999)).isEqualTo("+9999ms");
        assertThat(StateChange.signedMillis(14_771)).isEqualTo("+14.7s");
        assertThat(StateChange.signedMillis(2_471_086)).isEqualTo("+41m11s");
        assertThat(StateChange.signedMillis(-(3 * 3_600_000L + 5 * 60_000))).isEqualTo("-3h05m");
        assertThat(StateChange.signedMillis(2 * 86_400_000L + 4 * 3_600_000)).isEqualTo("+2d04h");
    }

    @Test
    void shouldNameTombstonesAndAMarkSetForTheFirstTime() {
        WorkerState before = state(1, "a/t1", 5, -1, -1);

        assertThat(StateChange.between(before, null, LAYOUT).kinds()).containsExactly("tombstone");
        assertThat(StateChange.between(before, before.withLastId(id(T, 1)), LAYOUT).description())
                .isEqualTo("lastId set to " + id(T, 1) + " (2020-01-02T03:46:40Z)");
    }
}
