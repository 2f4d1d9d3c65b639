package io.snowstamp.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.snowstamp.ownership.PreCommitHooks;
import io.snowstamp.stream.StamperStats;
import io.snowstamp.testing.Logback;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A clean stop under exactly-once waits a bounded time for idle tasks' last IDs (operations.md, Stopping): a stream
 * thread that never writes its hooks (held in a long wait, or its polls never come) must not hold the stop past the
 * limit, and the WARN says how many were left.
 */
class CleanStopLastIdsTest {

    /** A task's last ID whose thread never writes it: counts the writes that should not happen. */
    private static PreCommitHooks.Hook neverWritten(AtomicInteger writes) {
        return new PreCommitHooks.Hook() {
            @Override
            public void write() {
                writes.incrementAndGet();
            }

            @Override
            public boolean settled() {
                return false;
            }
        };
    }

    /** Stats whose hooks hold {@code tasks} waiting last IDs of this (live) thread, whose sentinel never punctuates. */
    private static StamperStats stoppingWithUnwritten(int tasks, AtomicInteger writes) {
        StamperStats stats = new StamperStats();
        PreCommitHooks hooks = stats.cleanStopHooks();
        for (int i = 0; i < tasks; i++) {
            hooks.pending(neverWritten(writes), (interval, punctuator) -> () -> { });
        }
        stats.stopping();
        return stats;
    }

    @Test
    void shouldReturnTheCountOfLastIdsLeftUnwrittenOnceTheLimitPasses() throws Exception {
        AtomicInteger writes = new AtomicInteger();
        StamperStats stats = stoppingWithUnwritten(3, writes);

        long started = System.nanoTime();
        int unwritten = stats.awaitLastIds(Duration.ofMillis(300));
        Duration waited = Duration.ofNanos(System.nanoTime() - started);

        assertThat(unwritten).isEqualTo(3);
        assertThat(waited).as("waited out the limit, and no more than a scheduling hiccup past it")
                .isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(Duration.ofSeconds(3));
        assertThat(writes).as("the waiting side writes nothing itself: the stream threads do").hasValue(0);
    }

    @Test
    void shouldReturnAtOnceWhenNoLastIdWaits() throws Exception {
        StamperStats stats = stoppingWithUnwritten(0, new AtomicInteger());

        long started = System.nanoTime();
        assertThat(stats.awaitLastIds(Duration.ofSeconds(30))).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void shouldWaitHalfTheShortStopTimeAndWarnHowManyLastIdsWereLeft() throws Exception {
        StamperStats stats = stoppingWithUnwritten(2, new AtomicInteger());
        Logger logger = Logback.logger(StreamsRunner.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        int unwritten;
        Duration waited;
        try {
            long started = System.nanoTime();
            // a stop given 600 ms leaves the other half to close Kafka Streams
            unwritten = StreamsRunner.awaitLastIds(stats, Duration.ofMillis(600));
            waited = Duration.ofNanos(System.nanoTime() - started);
        } finally {
            logger.detachAppender(lines);
        }

        assertThat(unwritten).isEqualTo(2);
        assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(Duration.ofSeconds(3));
        assertThat(lines.list).filteredOn(e -> e.getLevel() == Level.WARN).extracting(ILoggingEvent::getFormattedMessage)
                .singleElement().asString().startsWith("2 tasks' last IDs not written within 300ms:");
    }

    @Test
    void shouldNotWarnWhenEveryLastIdIsWritten() throws Exception {
        StamperStats stats = stoppingWithUnwritten(0, new AtomicInteger());
        Logger logger = Logback.logger(StreamsRunner.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            assertThat(StreamsRunner.awaitLastIds(stats, Duration.ofSeconds(30))).isZero();
        } finally {
            logger.detachAppender(lines);
        }
        assertThat(lines.list).noneMatch(e -> e.getLevel() == Level.WARN);
    }

    @Test
    void shouldCapTheWaitAtFiveSecondsWhateverTheStopTime() throws Exception {
        // the Kubernetes grace period counts on this cap (KubernetesManifestsTest): waited out once, at the default stop time
        StamperStats stats = stoppingWithUnwritten(1, new AtomicInteger());

        long started = System.nanoTime();
        assertThat(StreamsRunner.awaitLastIds(stats, Duration.ofSeconds(30))).isEqualTo(1);
        Duration waited = Duration.ofNanos(System.nanoTime() - started);

        assertThat(StreamsRunner.LAST_IDS_WAIT).isEqualTo(Duration.ofSeconds(5));
        assertThat(waited).isGreaterThanOrEqualTo(StreamsRunner.LAST_IDS_WAIT).isLessThan(StreamsRunner.LAST_IDS_WAIT.plusSeconds(3));
    }
}
