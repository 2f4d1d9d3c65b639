package io.snowstamp.it.fault;

import io.snowstamp.stream.Names;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once: a dead owner's open transaction does not hold its partition's next owner back until
 * the broker times it out. A SIGKILLed instance leaves its last transaction open, with the task's
 * changelog written and the input partition's offset commit pending; before a restored task runs,
 * Kafka Streams fetches that committed offset, and the broker answers only once no transaction holds
 * an offset commit for the partition pending. The stamper fences such a transaction when the
 * changelog's restore starts (not only at the task's start, which comes after that fetch): with the
 * shipped 20 s transaction timeout, a kill cost 22 s of output in {@code FailoverIT} before it did.
 *
 * <p>The dead owner is forced, not hoped for: a producer with the application's transactional-id
 * prefix opens a transaction holding the changelog partition and the input offset, with a transaction
 * timeout of {@link #DEAD_TIMEOUT}, and is left as a kill leaves it. The next owner must stamp the
 * records after that offset well within {@link #DEAD_TIMEOUT}; without the fence at restore start it
 * waits for the broker's abort.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(300)
class DeadOwnerTransactionIT extends OnSharedBroker {
    private static final Duration DEAD_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path work;

    @Test
    void shouldFenceADeadOwnersOpenTransactionBeforeTheCommittedOffsetIsFetched() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 1);
        String app = TestBroker.unique("dead-owner");
        Stamper first = Stamper.of(work, broker.bootstrapServers(), app, topics, "a").with("processing.guarantee", "exactly_once_v2");
        NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, 100);
        try (ChildJvm stamper = first.start()) {
            awaitStamped(topics.out(), 100, System.nanoTime() + TimeUnit.SECONDS.toNanos(120), stamper);
            assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
        }

        try (KafkaProducer<byte[], byte[]> dead = deadOwner(app, topics.in())) {
            long deadBegan = System.nanoTime();
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), 100, 100);
            try (ChildJvm next = first.instance("b").start()) {
                // half the dead transaction's timeout: a wait for the broker's abort cannot pass, on any machine
                awaitStamped(topics.out(), 200, deadBegan + DEAD_TIMEOUT.toNanos() / 2, next);
                assertThat(next.stderr()).as(next.logs())
                        .contains("fenced [" + app + "-dead-owner-1] (open transactions of a previous owner on [" + Names.changelogTopic(app) + "-0])");
            }
        }
    }

    /**
     * An open transaction as a SIGKILLed owner of partition 0 leaves it: a write to the task's changelog
     * and an offset commit for the input partition, neither committed nor aborted.
     */
    private static KafkaProducer<byte[], byte[]> deadOwner(String app, String input) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, app + "-dead-owner-1");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(DEAD_TIMEOUT.toMillis()));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(Names.changelogTopic(app), 0, "dead".getBytes(StandardCharsets.UTF_8),
                "never committed".getBytes(StandardCharsets.UTF_8))).get(60, TimeUnit.SECONDS);
        producer.sendOffsetsToTransaction(Map.of(new TopicPartition(input, 0), new OffsetAndMetadata(150)),
                new ConsumerGroupMetadata(app));
        producer.flush();
        return producer;
    }

    private static void awaitStamped(String output, int records, long deadlineNanos, ChildJvm stamper) throws Exception {
        int seen = 0;
        while (System.nanoTime() - deadlineNanos < 0) {
            seen = StampedRecords.read(broker.bootstrapServers(), output).size();
            if (seen >= records) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError(output + ": " + seen + " of " + records + " records stamped in time\n" + stamper.logs());
    }
}
