package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.resume.TailPrefetch;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ClientMetrics;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many tasks starting at once read their output tails in a batch, and each still resumes above its
 * own tail. The output topic already holds, per partition, IDs of the partition's worker an hour
 * ahead of the clock (only the tail guard can know them: the changelog is new) — on some partitions
 * buried under more than a window of another worker's records, so the backward scan runs too, and
 * some partitions are empty. One instance takes all partitions; every partition's first new ID
 * must be above its own planted ID, and the tail guard's consumer must have sent far fewer
 * requests than one read per task would (each of those is an end-offsets request and a fetch).
 */
@Tag("integration")
@Timeout(180)
class TailPrefetchIT extends OnSharedBroker {
    private static final int PARTITIONS = 64;
    /** Partitions whose own IDs are followed by more than one read window (512 records) of another worker's. */
    private static final int BURIED = 4;
    /** Partitions left empty: their tasks resume from the clock. */
    private static final int EMPTY = 4;
    private static final long FOREIGN_WORKER = 1000;
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");

    @TempDir
    Path work;

    @Test
    void shouldReadTheTailsOfTasksStartingTogetherInABatchAndResumeEachAboveItsOwn() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        String in = topics.in();
        String out = topics.out();
        Map<Integer, Long> planted = plant(out);

        SnowstampConfig config = ConfigLoader.load(null, Map.of(), Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "state.dir", work.resolve("state").toString(), "instance.id", "prefetch",
                "application.id", TestBroker.unique("prefetch-app"),
                "input.topic", in, "output.topic", out, "dlq.topic", topics.dlq(),
                "id.worker-registry", "off"));
        TailPrefetch.Stats stats;
        double tailGuardRequests;
        try (StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int p = 0; p < PARTITIONS; p++) {      // waiting already: every task stamps right after its start
                producer.send(new ProducerRecord<>(in, p, null, ("{\"n\":" + p + "}").getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(120))).isTrue();
            assertThat(awaitStamped(out, PARTITIONS, Duration.ofSeconds(60))).as("one stamped record per partition").hasSize(PARTITIONS);
            stats = runner.tailPrefetch();
            tailGuardRequests = ClientMetrics.consumerRequests("snowstamp-tail-guard-" + out);
        }

        Map<Integer, Long> firstNew = awaitStamped(out, PARTITIONS, Duration.ofSeconds(10));
        for (int p = 0; p < PARTITIONS; p++) {
            long id = firstNew.get(p);
            assertThat(LAYOUT.decode(id).worker()).as("worker of partition %d", p).isEqualTo(p);
            if (planted.containsKey(p)) {
                assertThat(id).as("partition %d: first new ID vs. its own ID already in the output", p).isGreaterThan(planted.get(p));
            }
        }
        assertThat(stats.served() + stats.fallbacks()).as("%s", stats).isEqualTo(PARTITIONS);
        assertThat(stats.batches()).as("%s", stats).isBetween(1L, (long) PARTITIONS / 4);
        assertThat(stats.served()).as("%s", stats).isGreaterThanOrEqualTo(PARTITIONS / 2);
        // one read per task: at least an end-offsets request and a fetch each, 2 x 64
        assertThat(tailGuardRequests).as("requests of the tail guard's consumer; %s", stats).isLessThan(PARTITIONS);
    }

    /** Writes this worker's IDs an hour ahead into every partition but the empty ones; returns the highest per partition. */
    private Map<Integer, Long> plant(String out) {
        long ahead = LAYOUT.unitsSinceEpoch(System.currentTimeMillis() + Duration.ofHours(1).toMillis());
        Map<Integer, Long> planted = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int p = 0; p < PARTITIONS - EMPTY; p++) {
                for (int seq = 0; seq < 3; seq++) {
                    long id = LAYOUT.encode(ahead + p, 0, p, seq);
                    send(producer, out, p, id);
                    planted.put(p, id);
                }
                if (p < BURIED) {
                    for (int n = 0; n < 600; n++) {
                        send(producer, out, p, LAYOUT.encode(ahead + 10_000 + n, 0, FOREIGN_WORKER + p - 100, 0));
                    }
                }
            }
            producer.flush();
        }
        return planted;
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, int partition, long id) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(IdHeader.ID, IdHeader.ascii(id));
        producer.send(new ProducerRecord<>(topic, partition, null, null, "{}".getBytes(StandardCharsets.UTF_8), headers));
    }

    /** partition -> the first ID of a record produced through the stamper (its value has "n"), once every partition has one. */
    private static Map<Integer, Long> awaitStamped(String out, int partitions, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<Integer, Long> first = new HashMap<>();
        while (System.nanoTime() < deadline) {
            first.clear();
            List<StampedRecords.Stamped> records = StampedRecords.read(broker.bootstrapServers(), out);
            records.stream().filter(r -> r.n() >= 0).forEach(r -> first.putIfAbsent(r.partition(), r.id()));
            if (first.size() >= partitions) {
                return first;
            }
            Thread.sleep(500);
        }
        return first;
    }
}
