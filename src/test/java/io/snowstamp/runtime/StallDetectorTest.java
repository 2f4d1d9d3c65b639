package io.snowstamp.runtime;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class StallDetectorTest {
    private static final long SECOND = 1_000_000_000L;
    private final StallDetector detector = new StallDetector(60 * SECOND);
    private final Object task0 = new Object();
    private final Object task1 = new Object();

    private static StallDetector.Look look(Object task, long issued, long committed, long end) {
        return new StallDetector.Look(task, issued, true, committed, end);
    }

    @Test
    void shouldCallStalledAPartitionWithInputWaitingThatNeitherIssuesNorCommitsForTheWholeTime() {
        assertThat(detector.observe(0, true, Map.of(0, look(task0, 10, 100, 150), 1, look(task1, 5, 50, 50)))).isEmpty();
        assertThat(detector.observe(59 * SECOND, true, Map.of(0, look(task0, 10, 100, 160), 1, look(task1, 5, 50, 50))))
                .as("not for long enough yet").isEmpty();
        assertThat(detector.observe(60 * SECOND, true, Map.of(0, look(task0, 10, 100, 170), 1, look(task1, 5, 50, 50))))
                .as("partition 1 has nothing waiting: idle, not stalled").containsExactly(0);
        assertThat(detector.stillNanos(0, 61 * SECOND)).isEqualTo(61 * SECOND);
    }

    /** The time it reports (metric snowstamp_input_stuck_seconds, which the stall alert reads) judges as the watch does. */
    @Test
    void shouldReportNoStuckTimeForDeadLettersNorForAnIdleInputsFirstRecord() {
        // partition 0 gets only records that go to the dead-letter topic: nothing issued, its committed offset moves;
        // partition 1 idled for an hour, then its first record waits 45 s for something legitimate
        detector.observe(0, true, Map.of(0, look(task0, 0, 100, 120), 1, look(task1, 7, 50, 50)));
        for (long s = 10; s <= 3600; s += 10) {
            detector.observe(s * SECOND, true, Map.of(0, look(task0, 0, 100 + s, 120 + s), 1, look(task1, 7, 50, 50)));
            assertThat(detector.stillNanos(0, s * SECOND)).as("dead letters are progress").isZero();
            assertThat(detector.stillNanos(1, s * SECOND)).as("idle").isZero();
        }
        detector.observe(3610 * SECOND, true, Map.of(1, look(task1, 7, 50, 51)));
        assertThat(detector.observe(3655 * SECOND, true, Map.of(1, look(task1, 7, 50, 51)))).isEmpty();
        assertThat(detector.stillNanos(1, 3655 * SECOND)).as("since its record came, not since the last stamp").isEqualTo(45 * SECOND);
        detector.observe(3660 * SECOND, true, Map.of(1, look(task1, 8, 51, 51)));
        assertThat(detector.stillNanos(1, 3660 * SECOND)).isZero();
    }

    /**
     * An input whose records retention deleted (its log start at its end) while the group's committed offset lies below
     * them — none committed yet (a new application on an old topic), an expired one, a stamper down longer than the
     * retention — has nothing to read: its task gets no record and never commits, and an idle input is no stall.
     */
    @Test
    void shouldCallNoInputWaitingWhereRetentionDeletedEverythingPastTheCommittedOffset() {
        for (long committed : new long[] {-1, 2}) {
            StallDetector fresh = new StallDetector(60 * SECOND);
            StallDetector.Look emptied = new StallDetector.Look(task0, 0, true, committed, 5, 5, false);
            assertThat(emptied.inputWaiting()).as("committed %d", committed).isFalse();
            fresh.observe(0, true, Map.of(0, emptied));
            assertThat(fresh.observe(120 * SECOND, true, Map.of(0, emptied))).as("committed %d", committed).isEmpty();
        }
        assertThat(new StallDetector.Look(task0, 0, true, 2, 7, 5, false).inputWaiting()).as("two records past the log start").isTrue();
    }

    /**
     * Past the committed offset an aborted transaction only (or markers), and the consumer caught up without delivering a
     * record: Kafka Streams commits nothing for a task that got none, and an idle input is no stall (review of issue 44).
     */
    @Test
    void shouldCallNoInputWaitingWhereTheConsumerCaughtUpWithoutDeliveringARecord() {
        StallDetector.Look aborted = new StallDetector.Look(task0, 0, true, 0, 4, 0, true);
        assertThat(aborted.inputWaiting()).isFalse();
        detector.observe(0, true, Map.of(0, aborted));
        assertThat(detector.observe(120 * SECOND, true, Map.of(0, aborted))).isEmpty();
        assertThat(new StallDetector.Look(task0, 0, true, 0, 4, 0, false).inputWaiting()).as("records not delivered yet").isTrue();
    }

    @Test
    void shouldCountAnIdIssuedOrACommitAsProgress() {
        detector.observe(0, true, Map.of(0, look(task0, 10, 100, 150), 1, look(task1, 5, 50, 80)));
        // partition 0 issued (its commit comes later); partition 1 committed records held back (id.on-excess-lead=pause)
        detector.observe(50 * SECOND, true, Map.of(0, look(task0, 11, 100, 150), 1, look(task1, 5, 60, 80)));
        assertThat(detector.observe(100 * SECOND, true, Map.of(0, look(task0, 11, 100, 150), 1, look(task1, 5, 60, 80))))
                .isEmpty();
        assertThat(detector.observe(110 * SECOND, true, Map.of(0, look(task0, 11, 100, 150), 1, look(task1, 5, 60, 80))))
                .containsExactly(0, 1);
    }

    @Test
    void shouldStartAgainForANewTaskAndForgetPartitionsNoLongerHeld() {
        detector.observe(0, true, Map.of(0, look(task0, 10, 100, 150)));
        assertThat(detector.observe(60 * SECOND, true, Map.of(0, look(task0, 10, 100, 150)))).containsExactly(0);
        // the partition came back to this instance with a new task, which issued as many IDs as the old one: a new start
        Object again = new Object();
        assertThat(detector.observe(61 * SECOND, true, Map.of(0, look(again, 10, 100, 150)))).isEmpty();
        assertThat(detector.observe(120 * SECOND, true, Map.of(0, look(again, 10, 100, 150)))).isEmpty();
        assertThat(detector.observe(121 * SECOND, true, Map.of(0, look(again, 10, 100, 150)))).containsExactly(0);
        assertThat(detector.observe(122 * SECOND, true, Map.of())).isEmpty();
        assertThat(detector.stillNanos(0, 122 * SECOND)).isZero();
    }

    @Test
    void shouldNeverCallAPartitionStalledWhoseEndIsUnknownOrWhoseInputIsEmpty() {
        detector.observe(0, true, Map.of(0, look(task0, 0, -1, -1), 1, look(task1, 0, -1, 0)));
        assertThat(detector.observe(100 * SECOND, true, Map.of(0, look(task0, 0, -1, -1), 1, look(task1, 0, -1, 0)))).isEmpty();
        // nothing committed yet, records waiting from the start of the partition
        detector.observe(110 * SECOND, true, Map.of(0, look(task0, 0, -1, 5), 1, look(task1, 0, -1, 3)));
        assertThat(detector.observe(170 * SECOND, true, Map.of(0, look(task0, 0, -1, 5), 1, look(task1, 0, -1, 3))))
                .containsExactly(0, 1);
    }

    @Test
    void shouldCountFromWhenInputStartedWaitingNotFromTheLastProgressOfAnIdlePartition() {
        // idle for ten minutes: nothing waits, nothing issued
        detector.observe(0, true, Map.of(0, look(task0, 10, 100, 100)));
        detector.observe(600 * SECOND, true, Map.of(0, look(task0, 10, 100, 100)));
        // a record arrives and waits a few seconds for something legitimate (a schema lookup in flight)
        assertThat(detector.observe(601 * SECOND, true, Map.of(0, look(task0, 10, 100, 101)))).isEmpty();
        assertThat(detector.observe(610 * SECOND, true, Map.of(0, look(task0, 10, 100, 101))))
                .as("9 s of waiting is not 60 s of stall, however long the partition was idle before").isEmpty();
        assertThat(detector.observe(611 * SECOND, true, Map.of(0, look(task0, 11, 100, 101)))).isEmpty();
        // a real stall still is one: input waits from 700 s on and nothing moves
        detector.observe(700 * SECOND, true, Map.of(0, look(task0, 11, 101, 150)));
        assertThat(detector.observe(759 * SECOND, true, Map.of(0, look(task0, 11, 101, 150)))).isEmpty();
        assertThat(detector.observe(760 * SECOND, true, Map.of(0, look(task0, 11, 101, 150)))).containsExactly(0);
    }

    @Test
    void shouldNotCountASlowStartWhoseLeaseIsNotConfirmedYetNorAnInstanceThatIsNotRunning() {
        StallDetector.Look unconfirmed = new StallDetector.Look(task0, 0, false, 100, 150);
        detector.observe(0, true, Map.of(0, unconfirmed));
        assertThat(detector.observe(90 * SECOND, true, Map.of(0, unconfirmed)))
                .as("a task still starting (its lease not confirmed by the changelog yet) is slow, not stuck").isEmpty();
        // confirmed at 90 s: the count starts there
        StallDetector.Look confirmed = look(task0, 0, 100, 150);
        assertThat(detector.observe(91 * SECOND, true, Map.of(0, confirmed))).isEmpty();
        assertThat(detector.observe(140 * SECOND, true, Map.of(0, confirmed))).isEmpty();
        // a rebalance from 140 s to 200 s: nothing counts meanwhile, and the count starts again when it is over
        assertThat(detector.observe(150 * SECOND, false, Map.of(0, confirmed))).isEmpty();
        assertThat(detector.observe(200 * SECOND, false, Map.of(0, confirmed))).isEmpty();
        assertThat(detector.observe(201 * SECOND, true, Map.of(0, confirmed))).isEmpty();
        assertThat(detector.observe(260 * SECOND, true, Map.of(0, confirmed))).isEmpty();
        assertThat(detector.observe(261 * SECOND, true, Map.of(0, confirmed))).containsExactly(0);
    }
}
