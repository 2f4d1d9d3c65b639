package io.snowstamp.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.snowstamp.testing.Logback;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

/**
 * The fence is best effort: a check that cannot be made must not hold a task's start, and must not flood the log
 * (operations.md: one WARN, later failures at INFO).
 */
class TransactionFenceTest {

    /** A real Admin client pointed at a port nothing listens on: every list of transactions times out. */
    private static Properties unreachable() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
        // short client timeouts: close() does not wait a minute for the calls the fence gave up on
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "500");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "1000");
        return props;
    }

    @Test
    void shouldWarnOnceThenLogAtInfoAndLetTheTaskStartWhenItCannotCheckForAPreviousOwner() throws Exception {
        Logger logger = Logback.logger(TransactionFence.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try (TransactionFence fence = new TransactionFence(unreachable(), "app", "events.stamped", Duration.ofMillis(200))) {
            long started = System.nanoTime();
            assertThatCode(() -> fence.fenceOpenTransactions(3)).as("the first task starts").doesNotThrowAnyException();
            assertThatCode(() -> fence.fenceOpenTransactions(4)).as("the second task starts").doesNotThrowAnyException();
            // each check gives up at its own timeout: a task start waits no longer than that for the fence
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        } finally {
            logger.detachAppender(lines);
        }

        List<ILoggingEvent> fence = lines.list.stream()
                .filter(e -> e.getFormattedMessage().contains("cannot check for a previous owner's open transaction")).toList();
        assertThat(fence).extracting(ILoggingEvent::getLevel).containsExactly(Level.WARN, Level.INFO);
        assertThat(fence.get(0).getFormattedMessage()).startsWith("[events.stamped-3]: ").contains("transaction.timeout.ms", "(later ones at INFO)");
        assertThat(fence.get(1).getFormattedMessage()).startsWith("[events.stamped-4]: ").doesNotContain("later ones at INFO");
    }
}
