package io.snowstamp.stream;

import org.apache.kafka.streams.errors.TaskMigratedException;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FreezeGuardTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LIMIT = 3_000 * MS;

    @Test
    void shouldSeeNoFreezeWhileTheWatchTicks() {
        FreezeWatch watch = new FreezeWatch(LIMIT, 0);
        long seen = watch.freezes();
        for (long t = 100 * MS; t <= 10_000 * MS; t += 100 * MS) {
            watch.tick(t);
            assertThat(watch.frozenSince(seen, t + 50 * MS, LIMIT)).isZero();
        }
    }

    @Test
    void shouldSeeAFreezeBeforeTheWatchRunsAgain() {
        FreezeWatch watch = new FreezeWatch(LIMIT, 0);
        long seen = watch.freezes();
        watch.tick(100 * MS);
        // the stamping thread resumes first, 8 s later: the watch's last tick is that old
        assertThat(watch.frozenSince(seen, 8_100 * MS, LIMIT)).isEqualTo(8_000 * MS);
    }

    @Test
    void shouldRememberAFreezeTheWatchNoticedFirst() {
        FreezeWatch watch = new FreezeWatch(LIMIT, 0);
        long seen = watch.freezes();
        watch.tick(100 * MS);
        watch.tick(8_100 * MS);
        watch.tick(8_200 * MS);
        assertThat(watch.frozenSince(seen, 8_250 * MS, LIMIT)).isEqualTo(8_000 * MS);
        assertThat(watch.frozenSince(watch.freezes(), 8_250 * MS, LIMIT)).as("a freeze before the guard opened").isZero();
    }

    @Test
    void shouldIgnoreAPauseShorterThanTheLimit() {
        FreezeWatch watch = new FreezeWatch(LIMIT, 0);
        long seen = watch.freezes();
        watch.tick(2_900 * MS);
        assertThat(watch.frozenSince(seen, 2_950 * MS, LIMIT)).isZero();
    }

    @Test
    void shouldRefuseToIssueAfterAFreezeWithATaskMigratedException() {
        FreezeWatch watch = new FreezeWatch(LIMIT, System.nanoTime() - 10_000 * MS);
        FreezeGuard guard = FreezeGuard.on(watch, LIMIT, "partition 3 worker 7");

        assertThatThrownBy(guard::check).isInstanceOf(TaskMigratedException.class)
                .hasMessageContaining("partition 3 worker 7: process frozen for");
    }

    @Test
    void shouldTakeTheMainConsumersSessionTimeoutWithStreamsPrecedence() {
        assertThat(FreezeGuard.sessionTimeoutMillis(Map.of())).isEqualTo(45_000);
        assertThat(FreezeGuard.sessionTimeoutMillis(Map.of("session.timeout.ms", "10000"))).isEqualTo(10_000);
        assertThat(FreezeGuard.sessionTimeoutMillis(Map.of("session.timeout.ms", "10000", "consumer.session.timeout.ms", 6000)))
                .isEqualTo(6_000);
        assertThat(FreezeGuard.sessionTimeoutMillis(Map.of("consumer.session.timeout.ms", "6000",
                "main.consumer.session.timeout.ms", "8000"))).isEqualTo(8_000);
    }
}
