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
        assertThat(pacing.gapNanos()).as("cured: the next stall starts from the first pause").isEqualTo(60 * SECOND);
        assertThat(pacing.restartNow(500 * SECOND, true)).isTrue();
        assertThat(pacing.restartNow(559 * SECOND, true)).isFalse();
    }
}
