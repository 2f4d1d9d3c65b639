package io.snowstamp.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
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

    /** What the fence logged while {@code use} ran on a fence with the check's {@code timeout}. */
    private static List<ILoggingEvent> logged(Duration timeout, java.util.function.Consumer<TransactionFence> use) throws Exception {
        return Logback.capture(TransactionFence.class, () -> {
            try (TransactionFence fence = new TransactionFence(unreachable(), "app", "events.stamped", timeout)) {
                use.accept(fence);
            }
        });
    }

    /** The client gives up before the fence does: the line carries the client's reason, not the name of its class. */
    @Test
    void shouldSayWhyInWordsWhenTheClientGivesUpFirst() throws Exception {
        List<ILoggingEvent> lines = logged(Duration.ofSeconds(20), fence -> fence.fenceOpenTransactions(3));

        assertThat(lines).filteredOn(e -> e.getLevel() == Level.WARN).extracting(ILoggingEvent::getFormattedMessage)
                .singleElement().asString().contains("cannot check for a previous owner's open transaction (Timed out")
                .doesNotContain("Exception", "org.apache", "recovery.tail-guard-timeout");
    }

    @Test
    void shouldWarnOnceThenLogAtInfoAndLetTheTaskStartWhenItCannotCheckForAPreviousOwner() throws Exception {
        List<ILoggingEvent> lines = logged(Duration.ofMillis(200), fence -> {
            long started = System.nanoTime();
            assertThatCode(() -> fence.fenceOpenTransactions(3)).as("the first task starts").doesNotThrowAnyException();
            assertThatCode(() -> fence.fenceOpenTransactions(4)).as("the second task starts").doesNotThrowAnyException();
            // each check gives up at its own timeout: a task start waits no longer than that for the fence
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        });

        List<ILoggingEvent> fence = lines.stream()
                .filter(e -> e.getFormattedMessage().contains("cannot check for a previous owner's open transaction")).toList();
        assertThat(fence).extracting(ILoggingEvent::getLevel).containsExactly(Level.WARN, Level.INFO);
        assertThat(fence.get(0).getFormattedMessage()).startsWith("[events.stamped-3]: ").contains("transaction.timeout.ms", "(later ones at INFO)")
                // the fence's own wait ran out (200 ms, before the client's 1 s): a timeout carries no message, the line says what it was
                .contains("(Kafka did not answer within 200 ms, recovery.tail-guard-timeout)").doesNotContain("null");
        assertThat(fence.get(1).getFormattedMessage()).startsWith("[events.stamped-4]: ").doesNotContain("later ones at INFO");
    }
}
