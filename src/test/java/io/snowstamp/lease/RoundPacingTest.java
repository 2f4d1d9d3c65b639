package io.snowstamp.lease;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** When the verifier sends its next round: every period, and right when a new lease's takeover wait ends. */
class RoundPacingTest {
    private static final long MS = 1_000_000L;
    private static final long PERIOD = RoundPacing.PERIOD.toNanos();
    private static final long NONE = Long.MAX_VALUE;

    @Test
    void shouldWaitOutThePeriodFromTheLastRoundsRequest() {
        assertThat(RoundPacing.pause(1_000 * MS, 1_030 * MS, NONE)).isEqualTo(PERIOD - 30 * MS);
        assertThat(RoundPacing.pause(1_000 * MS, 1_000 * MS + PERIOD + 5, NONE)).as("a slow round: the next at once")
                .isNegative();
    }

    @Test
    void shouldSendTheRoundThatEndsATakeoverWaitWhenItIsDue() {
        assertThat(RoundPacing.pause(1_000 * MS, 1_030 * MS, 1_090 * MS)).isEqualTo(60 * MS);
        assertThat(RoundPacing.pause(1_000 * MS, 1_030 * MS, 1_000 * MS + PERIOD + 50 * MS))
                .as("due after the next periodic round anyway").isEqualTo(PERIOD - 30 * MS);
    }

    @Test
    void shouldNotRunRoundsBackToBackForAWaitTheLastRoundWasSentAfter() {
        // the round sent at 1,000 ms was late enough to end the wait, but its partition was not read in time
        assertThat(RoundPacing.pause(1_000 * MS, 1_030 * MS, 990 * MS)).isEqualTo(PERIOD - 30 * MS);
        assertThat(RoundPacing.pause(1_000 * MS, 1_030 * MS, 1_000 * MS)).isEqualTo(PERIOD - 30 * MS);
    }

    @Test
    void shouldCompareTimesAcrossTheNanoTimeWrap() {
        long send = Long.MAX_VALUE - 10 * MS;
        long due = send + 50 * MS;      // wrapped past Long.MAX_VALUE into negatives
        assertThat(RoundPacing.pause(send, send + 5 * MS, due)).isEqualTo(45 * MS);
    }
}
