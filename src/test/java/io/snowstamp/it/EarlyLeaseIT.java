package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import io.snowstamp.ownership.EarlyLeases;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance taking over partitions takes each task's lease when the task's restore ends, and the task's
 * start uses that lease instead of taking another: every partition's changelog shows exactly one lease of
 * the new owner (one epoch, one acquisition time) on top of the old owner's, the new owner's count of leases
 * taken early equals its count adopted, and every partition resumes above the old owner's IDs. No time is
 * asserted (what the early lease saves is measured by {@code bench --footprint-partitions}, benchmarks.md).
 */
@Tag("integration")
@Timeout(240)
class EarlyLeaseIT extends OnSharedBroker {
    private static final int PARTITIONS = 16;

    @TempDir
    Path work;

    @Test
    void shouldTakeEachLeaseWhenItsRestoreEndsAndStartTheTaskWithIt() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        String application = TestBroker.unique("early-lease");
        String changelog = Names.changelogTopic(application);
        try {
            takeOverAndCheck(topics, application, changelog);
        } finally {
            for (String topic : List.of(topics.in(), topics.out(), topics.dlq(), changelog)) {
                TestBroker.deleteTopic(broker.bootstrapServers(), topic);
            }
        }
    }

    private void takeOverAndCheck(Stamper.Topics topics, String application, String changelog) throws Exception {
        EarlyLeases.Stats first;
        EarlyLeases.Stats takeover;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            try (StreamsRunner a = new StreamsRunner(config(topics, application, "a"), System::currentTimeMillis)) {
                produce(producer, topics.in(), 0);
                a.start();
                awaitStamped(topics.out(), 0);
                first = a.earlyLeases();
            }
            try (StreamsRunner b = new StreamsRunner(config(topics, application, "b"), System::currentTimeMillis)) {
                produce(producer, topics.in(), PARTITIONS);
                b.start();
                awaitStamped(topics.out(), PARTITIONS);
                takeover = b.earlyLeases();
            }
        }

        // a found empty changelogs: nothing restored, every start took its own lease
        assertThat(first).as("the first instance").isEqualTo(new EarlyLeases.Stats(0, 0, 0));
        assertThat(takeover).as("the instance that took over").isEqualTo(new EarlyLeases.Stats(PARTITIONS, PARTITIONS, 0));

        Map<Integer, Set<String>> leasesOfB = new TreeMap<>();
        Map<Integer, Long> epochOfA = new HashMap<>();
        WorkerStateSerde serde = new WorkerStateSerde();
        TopicReader.readToEnd(StampedRecords.committedReader(broker.bootstrapServers()), changelog, Duration.ofSeconds(60), record -> {
            WorkerState state = serde.deserializer().deserialize(changelog, record.value());
            if (state.holder().startsWith("b#")) {
                leasesOfB.computeIfAbsent(record.partition(), p -> new HashSet<>()).add(state.epoch() + "@" + state.acquiredAt());
            } else {
                epochOfA.merge(record.partition(), state.epoch(), Math::max);
            }
        });
        assertThat(leasesOfB).as("partitions the new owner wrote to").hasSize(PARTITIONS);
        leasesOfB.forEach((partition, leases) -> assertThat(leases).as("leases of the new owner on partition " + partition)
                .containsExactly((epochOfA.get(partition) + 1) + "@" + leases.iterator().next().split("@")[1]));

        Map<Integer, Long> highestOfA = new HashMap<>();
        for (StampedRecords.Stamped r : StampedRecords.read(broker.bootstrapServers(), topics.out())) {
            if (r.n() < PARTITIONS) {
                highestOfA.merge(r.partition(), r.id(), Math::max);
            }
        }
        for (StampedRecords.Stamped r : StampedRecords.read(broker.bootstrapServers(), topics.out())) {
            if (r.n() >= PARTITIONS) {
                assertThat(r.id()).as("partition %d resumes above the old owner", r.partition()).isGreaterThan(highestOfA.get(r.partition()));
            }
        }
    }

    private SnowstampConfig config(Stamper.Topics topics, String application, String instance) {
        return ConfigLoader.load(null, Map.of(), Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "state.dir", work.resolve("state-" + instance).toString(), "instance.id", instance,
                "application.id", application,
                "input.topic", topics.in(), "output.topic", topics.out(), "dlq.topic", topics.dlq(),
                "id.worker-registry", "off"));
    }

    private static void produce(KafkaProducer<byte[], byte[]> producer, String in, int firstN) {
        for (int p = 0; p < PARTITIONS; p++) {
            producer.send(new ProducerRecord<>(in, p, null, ("{\"n\":" + (firstN + p) + "}").getBytes(StandardCharsets.UTF_8)));
        }
        producer.flush();
    }

    /** Until every partition has stamped its record numbered {@code minN} or above. */
    private static void awaitStamped(String out, int minN) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        Set<Integer> stamped = Set.of();
        while (System.nanoTime() < deadline && stamped.size() < PARTITIONS) {
            Thread.sleep(500);
            stamped = new HashSet<>();
            for (StampedRecords.Stamped r : StampedRecords.read(broker.bootstrapServers(), out)) {
                if (r.n() >= minN) {
                    stamped.add(r.partition());
                }
            }
        }
        assertThat(stamped).as("partitions that stamped record %d or above", minN).hasSize(PARTITIONS);
    }
}
