package io.snowstamp.runtime;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class TuningTest {
    private static SnowstampConfig config(String... pairs) {
        return io.snowstamp.testing.TestConfig.base(Keys.INSTANCE_ID, "t", Keys.BOOTSTRAP_SERVERS, "k:9092").with(pairs);
    }

    private static Properties streams(SnowstampConfig config) {
        return KafkaSettings.streams(config.connection(), config.topics());
    }

    private static Properties streamsUntuned(SnowstampConfig config) {
        return KafkaSettings.streamsUntuned(config.connection(), config.topics());
    }

    @Test
    void shouldShipLargerBatchesAndPollsOnTopOfTheUntunedSettings() {
        Properties tuned = streams(config());
        Properties untuned = streamsUntuned(config());

        assertThat(tuned).containsAllEntriesOf(untuned)
                .containsEntry("producer.linger.ms", "5")
                .containsEntry("producer.batch.size", "262144")
                .containsEntry("consumer.max.poll.records", "5000")
                .doesNotContainKey("commit.interval.ms")
                .as("waiting for bytes costs latency: Kafka's default answers at once").doesNotContainKey("consumer.fetch.min.bytes");
    }

    @Test
    void shouldSizeTheProducersBatchesToThePartitionsItWrites() {
        // a few partitions: 256 KiB batches in Kafka's 32 MiB (no buffer.memory set)
        assertThat(KafkaSettings.streams(config().connection(), config().topics(), 4))
                .containsEntry("producer.batch.size", "262144").doesNotContainKey("producer.buffer.memory");
        // room for two open batches of each output and changelog partition: 32 MiB / (2 x 256)
        assertThat(KafkaSettings.streams(config().connection(), config().topics(), 128)).containsEntry("producer.batch.size", "65536")
                .doesNotContainKey("producer.buffer.memory");
        // 1,024 partitions: Kafka's 16 KiB batches in 64 MiB (256 KiB ones left room for 128 of 2,048 partitions)
        assertThat(KafkaSettings.streams(config().connection(), config().topics(), 1024)).containsEntry("producer.batch.size", "16384")
                .containsEntry("producer.buffer.memory", "67108864");
        // more: the memory stays at 64 MiB and the batches shrink, to 4 KiB at the least
        assertThat(KafkaSettings.streams(config().connection(), config().topics(), 4096)).containsEntry("producer.batch.size", "4096")
                .containsEntry("producer.buffer.memory", "67108864");
        assertThat(KafkaSettings.streams(config().connection(), config().topics(), 100_000)).containsEntry("producer.batch.size", "4096");
        // each setting the user gives wins on its own
        SnowstampConfig given = config("kafka.producer.batch.size", "1000000");
        assertThat(KafkaSettings.streams(given.connection(), given.topics(), 1024)).containsEntry("producer.batch.size", "1000000")
                .containsEntry("producer.buffer.memory", "67108864");
        SnowstampConfig memory = config("kafka.buffer.memory", "100000000");
        assertThat(KafkaSettings.streams(memory.connection(), memory.topics(), 1024)).containsEntry("buffer.memory", "100000000")
                .doesNotContainKey("producer.buffer.memory").containsEntry("producer.batch.size", "16384");
    }

    @Test
    void shouldLetTheUserWinWithOrWithoutAPrefix() {
        Properties props = streams(config("kafka.linger.ms", "50", "kafka.consumer.max.poll.records", "100"));

        assertThat(props).containsEntry("linger.ms", "50").doesNotContainKey("producer.linger.ms")
                .containsEntry("consumer.max.poll.records", "100");
    }

    @Test
    void shouldCommitEverySecondInTheThroughputProfileUnlessTold() {
        assertThat(streams(config("profile", "throughput"))).containsEntry("commit.interval.ms", "1000");
        assertThat(streams(config("profile", "throughput", "kafka.commit.interval.ms", "300")))
                .containsEntry("commit.interval.ms", "300");
    }

    @Test
    void shouldFailOverWithinSecondsOnAStockBroker() {
        Properties props = streams(config());

        assertThat(props).containsEntry("consumer.session.timeout.ms", "6000")
                .containsEntry("consumer.heartbeat.interval.ms", "1500")
                .containsEntry("producer.transaction.timeout.ms", "20000")
                .as("a fetch held open for new data delays the first fetch of the partitions a takeover resumes")
                .containsEntry("consumer.fetch.max.wait.ms", "100");
        assertThat(streams(config("kafka.session.timeout.ms", "20000")))
                .containsEntry("session.timeout.ms", "20000").doesNotContainKey("consumer.session.timeout.ms");
    }

    @Test
    void shouldKeepTheTransactionTimeoutAboveTheCommitInterval() {
        assertThat(streams(config("kafka.commit.interval.ms", "15000")))
                .containsEntry("producer.transaction.timeout.ms", "30000");
        assertThat(streams(config("processing.guarantee", "at_least_once")))
                .doesNotContainKey("producer.transaction.timeout.ms");
    }

    @Test
    void shouldGiveUpOnAFrozenBrokerWithinSecondsUnlessTold() {
        assertThat(streams(config())).containsEntry("request.timeout.ms", "3000");
        assertThat(streams(config("kafka.request.timeout.ms", "30000"))).containsEntry("request.timeout.ms", "30000");
        // a prefixed setting wins for its client in Kafka Streams; the others keep snowstamp's
        assertThat(streams(config("kafka.producer.request.timeout.ms", "30000")))
                .containsEntry("producer.request.timeout.ms", "30000").containsEntry("request.timeout.ms", "3000");
    }

    /**
     * design.md: a 3 s request timeout "for every client of the stamper, the lease's included" (README: clients that give
     * up on a silent broker after 3 s): the clients it makes beside Kafka Streams' too, as it makes them.
     */
    @Test
    void shouldGiveUpOnAFrozenBrokerWithinSecondsInEachOfTheStampersOwnClientsUnlessTold() {
        for (StamperTopology.OwnClient client : StamperTopology.OwnClient.values()) {
            assertThat(StamperTopology.properties(client, config().connection())).as(client.name())
                    .containsEntry("request.timeout.ms", "3000");
            assertThat(StamperTopology.properties(client, config("kafka.request.timeout.ms", "10000").connection()))
                    .as(client.name() + ", told").containsEntry("request.timeout.ms", "10000");
        }
    }
}
