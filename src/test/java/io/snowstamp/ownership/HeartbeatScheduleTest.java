package io.snowstamp.ownership;

import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.MockProcessorContext.CapturedPunctuator;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class HeartbeatScheduleTest {
    private static final Duration INTERVAL = Duration.ofSeconds(5);

    @Test
    void shouldSpreadTheFirstHeartbeatOfTasksStartedTogetherOverOneInterval() {
        assertThat(HeartbeatSchedule.phase(INTERVAL, 0)).isEqualTo(INTERVAL);
        assertThat(HeartbeatSchedule.phase(INTERVAL, 8)).isEqualTo(Duration.ofMillis(7500));
        assertThat(HeartbeatSchedule.phase(INTERVAL, 15)).isEqualTo(Duration.ofMillis(9687));
        assertThat(HeartbeatSchedule.phase(INTERVAL, 16)).as("16 phases, then again").isEqualTo(INTERVAL);
    }

    @Test
    void shouldBeatAtItsPhaseThenEveryIntervalUntilCancelled() {
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
        AtomicInteger beats = new AtomicInteger();
        HeartbeatSchedule schedule = new HeartbeatSchedule();

        schedule.start(context, INTERVAL, 3, beats::incrementAndGet);
        List<CapturedPunctuator> scheduled = context.scheduledPunctuators();
        assertThat(scheduled).singleElement().satisfies(first -> {
            assertThat(first.getInterval()).isEqualTo(Duration.ofMillis(5937));
            assertThat(first.getType()).isEqualTo(PunctuationType.WALL_CLOCK_TIME);
        });
        assertThat(beats).as("none before the first phase").hasValue(0);

        scheduled.get(0).getPunctuator().punctuate(0);
        assertThat(beats).hasValue(1);
        assertThat(scheduled.get(0).cancelled()).as("the first punctuation runs once").isTrue();
        assertThat(context.scheduledPunctuators()).hasSize(2);
        CapturedPunctuator every = context.scheduledPunctuators().get(1);
        assertThat(every.getInterval()).isEqualTo(INTERVAL);
        every.getPunctuator().punctuate(0);
        every.getPunctuator().punctuate(0);
        assertThat(beats).hasValue(3);

        schedule.cancel();
        assertThat(every.cancelled()).as("closed: no further heartbeat").isTrue();
    }

    @Test
    void shouldCancelAFirstHeartbeatStillWaitingForItsPhase() {
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
        HeartbeatSchedule schedule = new HeartbeatSchedule();
        schedule.start(context, INTERVAL, 1, () -> { });

        schedule.cancel();

        assertThat(context.scheduledPunctuators().get(0).cancelled()).isTrue();
    }
}
