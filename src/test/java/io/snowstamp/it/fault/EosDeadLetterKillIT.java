package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, Dead letters: under exactly-once a dead letter is written in the same transaction as its input's
 * offset, so a crash neither loses it nor writes it twice. One stamper, half of whose input is not JSON, SIGKILLed
 * three times while dead letters flow (every transaction holds some: ~150 a second against a commit every 100 ms) and
 * restarted. Read read_committed, the dead-letter topic holds every bad input exactly once and the output every good one
 * exactly once; read read_uncommitted, it holds more: the dead letters of the transactions the kills cut short, written
 * again after the restart (what a consumer would see twice were they not in the transaction: the schedule was tried).
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(600)
class EosDeadLetterKillIT extends OnSharedBroker {
    private static final int KILLS = 3;
    private static final long SEND_EVERY_MILLIS = 20;
    private static final int PER_SEND = 6;

    @TempDir
    Path work;

    @Test
    void shouldWriteEachDeadLetterOnceAcrossKills() throws Exception {
        Timeline timeline = new Timeline("eos-dead-letters");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("dead-kill"), topics, "dk-1")
                .with("stamp.json-field", "id");     // values are checked as JSON objects: the bad ones are dead letters
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicLong sent = new AtomicLong();
        Thread producer = new Thread(() -> produce(topics.in(), producing, sent), "bad-and-good");
        ChildJvm stamper = spec.start();
        try {
            producer.start();
            for (int kill = 1; kill <= KILLS; kill++) {
                long before = sent.get();
                int atLeast = 1 + committed(topics.dlq()).size();
                assertThat(awaitDeadLetters(topics.dlq(), atLeast, Duration.ofSeconds(90))).as("dead letters flowing\n%s", stamper.logs())
                        .hasSizeGreaterThanOrEqualTo(atLeast);
                Thread.sleep(1_500);    // dead letters flowing, a transaction open
                stamper.kill();
                timeline.mark("kill %d after %d records sent (%d since the last)", kill, sent.get(), sent.get() - before);
                stamper = spec.restartAfterCrash(refusal -> timeline.mark("restart refused, local state deleted: %s", refusal));
            }
            Thread.sleep(2_000);
            producing.set(false);
            producer.join(10_000);
            long total = sent.get();
            long bad = total / 2;
            timeline.mark("sent %d records, %d of them not JSON", total, bad);

            List<ConsumerRecord<byte[], byte[]>> dead = awaitDeadLetters(topics.dlq(), (int) bad, Duration.ofSeconds(120));
            Map<String, Integer> deadByKey = countByKey(dead);
            List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(topics.out(), (int) (total - bad), Duration.ofSeconds(120));
            Map<String, Integer> stampedByKey = countByKey(stamped);
            int uncommitted = read(topics.dlq(), "read_uncommitted", Duration.ofSeconds(10)).size();
            timeline.mark("dead letters: %d committed (%d distinct), %d read_uncommitted; stamped: %d (%d distinct)", dead.size(),
                    deadByKey.size(), uncommitted, stamped.size(), stampedByKey.size());

            assertThat(deadByKey.entrySet()).as("a bad input dead-lettered twice").allMatch(e -> e.getValue() == 1);
            assertThat(deadByKey).as("every bad input dead-lettered\n%s", stamper.logs()).hasSize((int) bad);
            assertThat(deadByKey.keySet()).allMatch(key -> key.startsWith("bad-"));
            assertThat(stampedByKey.entrySet()).as("a good input stamped twice").allMatch(e -> e.getValue() == 1);
            assertThat(stampedByKey).as("every good input stamped").hasSize((int) (total - bad));
            assertThat(uncommitted).as("the kills cut transactions holding dead letters short (written again after the restart)")
                    .isGreaterThan(dead.size());
            assertThat(stamper.isAlive()).as(stamper.logs()).isTrue();
        } finally {
            producing.set(false);
            stamper.close();
        }
    }

    /** Sends {@value #PER_SEND} records every {@value #SEND_EVERY_MILLIS} ms, alternately good (JSON) and bad (not JSON). */
    private static void produce(String topic, AtomicBoolean producing, AtomicLong sent) {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            while (producing.get()) {
                for (int i = 0; i < PER_SEND; i++) {
                    long n = sent.getAndIncrement();
                    boolean bad = n % 2 == 1;
                    String value = bad ? "not json " + n : "{\"n\":" + n + "}";
                    producer.send(new ProducerRecord<>(topic, (int) (n / 2 % 2), ((bad ? "bad-" : "good-") + n).getBytes(StandardCharsets.UTF_8),
                            value.getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
                Thread.sleep(SEND_EVERY_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> committed(String topic) {
        return read(topic, "read_committed", Duration.ofSeconds(2));
    }

    private static List<ConsumerRecord<byte[], byte[]>> awaitDeadLetters(String topic, int atLeast, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        List<ConsumerRecord<byte[], byte[]>> seen = committed(topic);
        while (seen.size() < atLeast && System.nanoTime() - until < 0) {
            Thread.sleep(500);
            seen = committed(topic);
        }
        return seen;
    }

    /** Everything in {@code topic} now, at {@code isolation}: read until a poll of {@code quiet} brings nothing more. */
    private static List<ConsumerRecord<byte[], byte[]>> read(String topic, String isolation, Duration quiet) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long until = System.nanoTime() + quiet.toNanos();
            while (System.nanoTime() - until < 0 && partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    private static Map<String, Integer> countByKey(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<String, Integer> counts = new HashMap<>();
        records.forEach(r -> counts.merge(new String(r.key(), StandardCharsets.UTF_8), 1, Integer::sum));
        return counts;
    }
}
