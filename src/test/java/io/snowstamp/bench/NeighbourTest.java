package io.snowstamp.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NeighbourTest {
    @Test
    void shouldRunOneBusyProcessPerCoreUntilClosed() throws Exception {
        List<ProcessHandle> loops;
        try (Neighbour neighbour = Neighbour.start(2)) {
            loops = neighbour.processes();
            assertThat(neighbour.cores()).isEqualTo(2);
            assertThat(loops).hasSize(2).allMatch(ProcessHandle::isAlive);
            assertThat(loops).noneMatch(p -> p.pid() == ProcessHandle.current().pid());
        }
        assertThat(loops).noneMatch(ProcessHandle::isAlive);
    }

    @Test
    void shouldStartNothingForNoCores() throws Exception {
        try (Neighbour neighbour = Neighbour.start(0)) {
            assertThat(neighbour.processes()).isEmpty();
        }
    }

    @Test
    void shouldStopTheLoopsWhenTheRunThrows() {
        List<List<ProcessHandle>> seen = new java.util.ArrayList<>();
        assertThatThrownBy(() -> {
            try (Neighbour neighbour = Neighbour.start(1)) {
                seen.add(neighbour.processes());
                throw new IllegalStateException("the measured run failed");
            }
        }).hasMessage("the measured run failed");
        assertThat(seen.get(0)).hasSize(1).noneMatch(ProcessHandle::isAlive);
    }

    @Test
    void shouldTellTheLoadAverageRoundedOrMinusOne() {
        double load = Neighbour.loadAverage();
        assertThat(load == -1 || load >= 0).isTrue();
    }
}
