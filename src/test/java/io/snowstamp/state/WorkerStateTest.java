package io.snowstamp.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WorkerStateTest {

    private static final WorkerState STATE = new WorkerState("fp", 5, 3, "a/t1", 100, 200, 1000, 2000);

    @Test
    void shouldStartWithNoLeaseAndNoIds() {
        WorkerState initial = WorkerState.initial("fp", 7);

        assertThat(initial).isEqualTo(new WorkerState("fp", 7, 0, "", 0, 0, -1, -1));
        assertThat(initial.highWaterMark()).isEqualTo(-1);
    }

    @Test
    void shouldTakeANewLeaseKeepingTheHighWaterMark() {
        assertThat(STATE.withNewLease("b/t2", 500)).isEqualTo(new WorkerState("fp", 5, 4, "b/t2", 500, 500, 1000, 2000));
    }

    @Test
    void shouldCopyWithOneFieldChanged() {
        assertThat(STATE.withHeartbeat(300)).isEqualTo(new WorkerState("fp", 5, 3, "a/t1", 100, 300, 1000, 2000));
        assertThat(STATE.withLastId(1500)).isEqualTo(new WorkerState("fp", 5, 3, "a/t1", 100, 200, 1500, 2000));
        assertThat(STATE.withReservedUntil(900)).isEqualTo(new WorkerState("fp", 5, 3, "a/t1", 100, 200, 1000, 900));
    }

    @Test
    void shouldTakeTheHigherOfLastIdAndReservation() {
        assertThat(STATE.highWaterMark()).isEqualTo(2000);
        assertThat(STATE.withLastId(2500).highWaterMark()).isEqualTo(2500);
        assertThat(STATE.withReservedUntil(-1).highWaterMark()).isEqualTo(1000);
    }

    @Test
    void shouldRefuseImpossibleValues() {
        assertThatThrownBy(() -> new WorkerState("fp", -1, 0, "", 0, 0, -1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workerId and epoch must be >= 0, got -1, 0");
        assertThatThrownBy(() -> new WorkerState("fp", 0, -2, "", 0, 0, -1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workerId and epoch must be >= 0, got 0, -2");
        assertThatThrownBy(() -> new WorkerState(null, 0, 0, "", 0, 0, -1, -1)).isInstanceOf(NullPointerException.class)
                .hasMessage("layoutFingerprint");
        assertThatThrownBy(() -> new WorkerState("fp", 0, 0, null, 0, 0, -1, -1)).isInstanceOf(NullPointerException.class)
                .hasMessage("holder");
    }
}
