package io.snowstamp.embedded;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Creates a fresh broker's internal topics ({@code __transaction_state}, {@code __consumer_offsets})
 * before anything else uses it.
 *
 * <p>WHY: Kafka creates them lazily, on the first coordinator lookup. On a fresh broker that lookup
 * is the stamper's own start-up, so its first transactions race the creation and the loading of
 * the transaction coordinator: the broker answers the first produce with {@code CONCURRENT_TRANSACTIONS},
 * then (transactions v2, KAFKA-18202) rejects the in-flight batches behind it with
 * {@code OUT_OF_ORDER_SEQUENCE_NUMBER} and logs each at ERROR with a stack trace. Everything is
 * retried and succeeds, but a first {@code demo} printed a screen of errors. One transactional
 * producer's {@code initTransactions} and one group-coordinator lookup, done here while nothing else
 * runs, make the first real transaction meet a loaded coordinator, as every later start does.
 */
final class BrokerWarmUp {
    private static final Logger log = LoggerFactory.getLogger(BrokerWarmUp.class);
    private static final Duration LIMIT = Duration.ofSeconds(30);

    private BrokerWarmUp() {
    }

    /** True when the broker of {@code logDir} has not created both internal topics yet. */
    static boolean needed(Path logDir) {
        return !Files.isDirectory(logDir.resolve("__transaction_state-0")) || !Files.isDirectory(logDir.resolve("__consumer_offsets-0"));
    }

    /** Creates both internal topics and waits until their coordinators answer; a failure is logged, never thrown. */
    static void run(String bootstrapServers) {
        long start = System.nanoTime();
        Map<String, Object> common = Map.of("bootstrap.servers", bootstrapServers, "client.id", "snowstamp-warm-up");
        try (Admin admin = Admin.create(Map.copyOf(common))) {
            // a group lookup creates __consumer_offsets and waits for its coordinator
            admin.listConsumerGroupOffsets("snowstamp-warm-up").partitionsToOffsetAndMetadata()
                    .get(LIMIT.toMillis(), TimeUnit.MILLISECONDS);
            Map<String, Object> producer = new java.util.HashMap<>(common);
            producer.put("transactional.id", "snowstamp-warm-up");
            producer.put("max.block.ms", (int) LIMIT.toMillis());
            try (KafkaProducer<byte[], byte[]> transactions = new KafkaProducer<>(producer, new ByteArraySerializer(), new ByteArraySerializer())) {
                // creates __transaction_state and returns once its coordinator has loaded
                transactions.initTransactions();
            }
            log.debug("embedded broker warmed up in {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } catch (Exception e) {
            // only start-up noise is at stake: the stamper's own retries cope with a cold coordinator
            log.debug("embedded broker warm-up did not complete: {}", e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
