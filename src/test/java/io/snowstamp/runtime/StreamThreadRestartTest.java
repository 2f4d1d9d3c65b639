package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.stream.StamperStats;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, the stall watch: a replaced stream thread that does not stop while no task issued an ID stops the
 * stamper (the runner keeps the error and exits 1); a slow one, or a replacement that went through, leaves it running.
 * {@link ThreadReplacementTest} covers the decision; this covers what the decision does.
 */
class StreamThreadRestartTest {
    private final List<SnowstampException> stopped = new ArrayList<>();
    private final StreamThreadRestart restart = new StreamThreadRestart(() -> null, new StamperStats(), stopped::add);

    @Test
    void shouldStopTheStamperWhenAReplacedThreadIsStuck() {
        restart.react(ThreadReplacement.Outcome.STUCK);

        assertThat(stopped).hasSize(1);
        assertThat(stopped.get(0).getMessage()).contains("did not stop within a minute", "no task of this instance issued an ID",
                "stopping the stamper");
    }

    @Test
    void shouldKeepRunningWhenTheInstanceIsOnlySlowOrEveryThreadWasReplaced() {
        restart.react(ThreadReplacement.Outcome.SLOW);
        restart.react(ThreadReplacement.Outcome.REPLACED);

        assertThat(stopped).isEmpty();
    }

    @Test
    void shouldDoNothingWithoutARunningInstance() {
        restart.run();

        assertThat(stopped).isEmpty();
    }
}
