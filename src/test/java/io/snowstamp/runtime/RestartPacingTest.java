package io.snowstamp.runtime;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RestartPacingTest {
    private static final long SECOND = 1_000_000_000L;
    private final RestartPacing pacing = new RestartPacing(60 * SECOND, 240 * SECOND);

    @Test
    void shouldRestartAtTheFirstStallThenWaitTwiceAsLongAfterEachRestartThatDidNotCureIt() {
        assertThat(pacing.restartNow(0, false)).isFalse();
        assertThat(pacing.restartNow(10 * SECOND, true)).as("the detector already waited stall-after").isTrue();
        assertThat(pacing.restartNow(69 * SECOND, true)).as("the previous restart is still settling").isFalse();
        assertThat(pacing.restartNow(70 * SECOND, true)).isTrue();
        assertThat(pacing.gapNanos()).isEqualTo(120 * SECOND);
        assertThat(pacing.restartNow(189 * SECOND, true)).isFalse();
        assertThat(pacing.restartNow(190 * SECOND, true)).isTrue();
        assertThat(pacing.gapNanos()).isEqualTo(240 * SECOND);
        assertThat(pacing.restartNow(430 * SECOND, true)).isTrue();
        assertThat(pacing.gapNanos()).as("never more than the longest pause").isEqualTo(240 * SECOND);
    }

    @Test
    void shouldStartANewSeriesOnceARestartCuredTheStall() {
        assertThat(pacing.restartNow(0, true)).isTrue();
        assertThat(pacing.restartNow(60 * SECOND, true)).isTrue();
        assertThat(pacing.gapNanos()).isEqualTo(120 * SECOND);
        assertThat(pacing.restartNow(100 * SECOND, false)).as("no stall while settling: not yet called cured").isFalse();
        assertThat(pacing.gapNanos()).isEqualTo(120 * SECOND);
        assertThat(pacing.restartNow(180 * SECOND, false)).isFalse();
        assertThat(pacing.gapNanos()).as("the pause is over, but the detector has not had the time to see the stall again")
                .isEqualTo(120 * SECOND);
        assertThat(pacing.restartNow(300 * SECOND, false)).isFalse();
        assertThat(pacing.gapNanos()).as("cured: quiet for the pause plus twice the first").isEqualTo(60 * SECOND);
        assertThat(pacing.restartNow(500 * SECOND, true)).isTrue();
        assertThat(pacing.restartNow(559 * SECOND, true)).isFalse();
    }

    /**
     * A stall no restart cures, as the real detector reports it: nothing stalled at the looks right after each restart
     * (its count starts again with the new task), stalled again 75 s after it. The pause still doubles.
     */
    @Test
    void shouldKeepDoublingThePauseWhenTheDetectorSeesTheStallOnlyAgainAfterEachRestart() {
        long restartAt = 0;
        assertThat(pacing.restartNow(0, true)).isTrue();
        java.util.List<Long> restarts = new java.util.ArrayList<>();
        for (long now = 15; now <= 1_800; now += 15) {
            boolean stalled = now - restartAt >= 75;    // the new task stalled again, seen one stall-after after its start
            if (pacing.restartNow(now * SECOND, stalled)) {
                restarts.add(now - restartAt);
                restartAt = now;
            }
        }
        assertThat(restarts).as("gaps between restarts in 30 minutes").containsExactly(75L, 120L, 240L, 240L, 240L, 240L, 240L, 240L);
    }

    /**
     * The pacing the stall watch really uses ({@link StallWatch#pacing}, its {@code MAX_GAP_FACTOR}), under a stall no
     * restart cures, looked at every 10 s as the watch does for a {@code recovery.stall-after} of 60 s: each pause twice
     * the last, up to 16 times {@code recovery.stall-after} (operations.md), then steady.
     */
    @Test
    void shouldCapThePauseTheWatchUsesAtSixteenTimesStallAfter() {
        RestartPacing watched = StallWatch.pacing(java.time.Duration.ofSeconds(60));
        assertThat(watched.restartNow(0, true)).isTrue();
        java.util.List<Long> gaps = new java.util.ArrayList<>();
        long last = 0;
        for (long now = 10; now <= 6 * 3_600; now += 10) {
            if (watched.restartNow(now * SECOND, true)) {
                gaps.add(now - last);
                last = now;
            }
        }
        assertThat(gaps).as("seconds between restarts in six hours").startsWith(60L, 120L, 240L, 480L, 960L, 960L)
                .allSatisfy(gap -> assertThat(gap).isLessThanOrEqualTo(16 * 60L));
        assertThat(watched.gapNanos()).isEqualTo(16 * 60 * SECOND);
    }
}
