package io.snowstamp.runtime;

import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.stream.Names;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which restores fence a predecessor: those of a task's stores. The global tags table of sequence mode is restored by
 * every instance at any time, and its changelog partition names no task; fencing the holders of the output partition of
 * that number aborted a live owner's transaction in {@code SequenceFaultIT} (a gap of 202 numbers with no failover).
 */
class RestoreTrackerTest {
    @Test
    void shouldFenceOnlyWhenATasksStoreStartsRestoring() {
        assertThat(RestoreTracker.startsATask(Names.STORE)).isTrue();
        assertThat(RestoreTracker.startsATask(Names.PENDING_STORE)).isTrue();
        assertThat(RestoreTracker.startsATask(SequenceNames.STORE)).isTrue();
        assertThat(RestoreTracker.startsATask(SequenceNames.TAGS_STORE)).as("the global tags table").isFalse();
    }
}
