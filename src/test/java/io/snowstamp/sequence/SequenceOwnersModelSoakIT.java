package io.snowstamp.sequence;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The soak of {@link SequenceOwnersModelTest} in the {@code full} tier: the default suite's schedules and as many again
 * several times over (schedules are seeded by their number).
 */
@Tag("full")
class SequenceOwnersModelSoakIT {
    @Test
    void shouldNeverForwardANumberTwiceForATagAcrossThreeOwnersOverManyMoreSchedules() {
        new SequenceOwnersModelTest().check(1_500);
    }
}
