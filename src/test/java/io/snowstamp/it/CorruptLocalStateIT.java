package io.snowstamp.it;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.TestBroker;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A SIGKILL in the middle of creating a store can leave a RocksDB directory that Kafka Streams
 * 4.3.1 refuses on every later start ("wal_dir contains existing log file"). The runner wipes such
 * local state once — it is restored from the changelog — instead of needing an operator. The only
 * RocksDB store left is the pause buffer of {@code id.on-excess-lead=pause} (and of schema-registry values); the worker state is in
 * memory and Kafka Streams never opens its old directory (see {@code ChangelogUpgradeIT}).
 */
@Tag("integration")
@Timeout(180)
class CorruptLocalStateIT {
    @TempDir
    Path work;

    @Test
    void shouldWipeUnreadableLocalStateOnceAndStart() throws Exception {
        Logger logger = io.snowstamp.testing.Logback.logger(StreamsRunner.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        try (TestBroker broker = TestBroker.start()) {
            broker.createTopic("corrupt-in", 1);
            broker.createTopic("corrupt-out", 1);
            broker.createTopic("corrupt-dlq", 1);
            Path store = work.resolve("state/corrupt/corrupt-app/0_0/rocksdb/pending-records");
            Files.createDirectories(store);
            Files.write(store.resolve("000004.log"), new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
            Files.writeString(work.resolve("state/corrupt/corrupt-app/0_0/.checkpoint"), "0\n1\ncorrupt-app-pending-records-changelog 0 0\n");

            Map<String, String> settings = Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                    "state.dir", work.resolve("state").toString(), "instance.id", "corrupt", "application.id", "corrupt-app",
                    "input.topic", "corrupt-in", "output.topic", "corrupt-out", "dlq.topic", "corrupt-dlq", "id.worker-registry", "off",
                    "id.on-excess-lead", "pause");
            try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
                runner.start();
                assertThat(runner.awaitRunning(Duration.ofSeconds(120))).isTrue();
                broker.produce("corrupt-in", 0, 50);
                assertThat(broker.consume("corrupt-out", 50, Duration.ofSeconds(60))).hasSize(50);
            }
        } finally {
            logger.detachAppender(events);
        }
        // once: a wipe that did not cure the store must stop the start, not wipe again and again
        assertThat(events.list).extracting(ILoggingEvent::getFormattedMessage)
                .filteredOn(message -> message.contains("wiping it once")).singleElement()
                .satisfies(message -> assertThat(message).contains("cannot be opened"));
    }
}
