package io.snowstamp.runtime;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class StallDetectorTest {
    private static final long SECOND = 1_000_000_000L;
    private final StallDetector detector = new StallDetector(60 * SECOND);

    @Test
    void shouldCallStalledAPartitionWithInputWaitingThatNeitherIssuesNorCommitsForTheWholeTime() {
        assertThat(detector.observe(0, Map.of(0, 10L, 1, 5L), Map.of(0, 100L, 1, 50L), Map.of(0, 150L, 1, 50L))).isEmpty();
        assertThat(detector.observe(59 * SECOND, Map.of(0, 10L, 1, 5L), Map.of(0, 100L, 1, 50L), Map.of(0, 160L, 1, 50L)))
                .as("not for long enough yet").isEmpty();
        assertThat(detector.observe(60 * SECOND, Map.of(0, 10L, 1, 5L), Map.of(0, 100L, 1, 50L), Map.of(0, 170L, 1, 50L)))
                .as("partition 1 has nothing waiting: idle, not stalled").containsExactly(0);
        assertThat(detector.stillNanos(0, 61 * SECOND)).isEqualTo(61 * SECOND);
    }

    @Test
    void shouldCountAnIdIssuedOrACommitAsProgress() {
        detector.observe(0, Map.of(0, 10L, 1, 5L), Map.of(0, 100L, 1, 50L), Map.of(0, 150L, 1, 80L));
        // partition 0 issued (its commit comes later); partition 1 committed records held back (id.on-excess-lead=pause)
        detector.observe(50 * SECOND, Map.of(0, 11L, 1, 5L), Map.of(0, 100L, 1, 60L), Map.of(0, 150L, 1, 80L));
        assertThat(detector.observe(100 * SECOND, Map.of(0, 11L, 1, 5L), Map.of(0, 100L, 1, 60L), Map.of(0, 150L, 1, 80L)))
                .isEmpty();
        assertThat(detector.observe(110 * SECOND, Map.of(0, 11L, 1, 5L), Map.of(0, 100L, 1, 60L), Map.of(0, 150L, 1, 80L)))
                .containsExactly(0, 1);
    }

    @Test
    void shouldStartAgainForANewTaskAndForgetPartitionsNoLongerHeld() {
        detector.observe(0, Map.of(0, 10L), Map.of(0, 100L), Map.of(0, 150L));
        assertThat(detector.observe(60 * SECOND, Map.of(0, 10L), Map.of(0, 100L), Map.of(0, 150L))).containsExactly(0);
        // the partition came back to this instance with a new task: its count starts again
        assertThat(detector.observe(61 * SECOND, Map.of(0, 0L), Map.of(0, 100L), Map.of(0, 150L))).isEmpty();
        assertThat(detector.observe(62 * SECOND, Map.of(), Map.of(), Map.of())).isEmpty();
        assertThat(detector.stillNanos(0, 62 * SECOND)).isZero();
    }

    @Test
    void shouldNeverCallAPartitionStalledWhoseEndIsUnknownOrWhoseInputIsEmpty() {
        detector.observe(0, Map.of(0, 0L, 1, 0L), Map.of(), Map.of(1, 0L));
        assertThat(detector.observe(100 * SECOND, Map.of(0, 0L, 1, 0L), Map.of(), Map.of(1, 0L))).isEmpty();
        // nothing committed yet, records waiting from the start of the partition
        assertThat(detector.observe(200 * SECOND, Map.of(0, 0L, 1, 0L), Map.of(), Map.of(0, 5L, 1, 3L))).containsExactly(0, 1);
    }
}
