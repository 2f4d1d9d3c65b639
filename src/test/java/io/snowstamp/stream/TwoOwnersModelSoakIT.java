package io.snowstamp.stream;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The soak of {@link TwoOwnersModelTest} in the {@code full} tier: the same schedules as the default suite and as many
 * again several times over (schedules are seeded by their number, so the first ones are the default suite's).
 */
@Tag("full")
class TwoOwnersModelSoakIT {
    @Test
    void shouldNeverLetTwoOwnersForwardTheSameIdOverManyMoreSchedules() {
        new TwoOwnersModelTest().check(false, 3_000);
    }

    @Test
    void shouldNeverLetTwoOwnersForwardTheSameIdWhileTheOldOwnersRoundsReachADeposedLeaderOverManyMoreSchedules() {
        new TwoOwnersModelTest().check(true, 1_500);
    }
}
