package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.PrometheusText;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 42, "no task's wait holds another task": one stream thread holds three partitions; the lease reader withholds
 * partition 0's confirmations for 10 s while all three receive a record every 20 ms
 * ({@code -Dsnowstamp.test.hold-confirmations}, forced, not hoped for). Partition 0's lease runs out of its term and its
 * next IDs must wait: its records are set aside, in input order, and stamped once the confirmations come back; the
 * other two partitions of the same thread keep stamping without a gap. Before the set-aside, the wait was a park inside
 * {@code process()}: the whole thread stopped, and partitions 1 and 2 showed the same ~8 s gap as partition 0.
 * The gaps are read from the IDs' own time fields (the moment each was stamped).
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(240)
class NeighbourWaitIT extends OnSharedBroker {
    private static final int PARTITIONS = 3;
    private static final long SEND_EVERY_MILLIS = 20;
    private static final long RUN_MILLIS = 28_000;
    @TempDir
    Path work;

    @ParameterizedTest
    @ValueSource(strings = {"exactly_once_v2", "at_least_once"})
    void shouldKeepStampingTheOtherPartitionsOfAThreadWhileOnePartitionsIdsWait(String guarantee) throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("neighbour"), topics, "n1")
                .with("processing.guarantee", guarantee)
                .with("admin.port", "0")
                .withJvmArg("-Dsnowstamp.test.hold-confirmations=0:8:10");
        int sent;
        try (ChildJvm child = stamper.start()) {
            String adminUrl = child.adminUrl();
            // the lease reader's lag where operators look (issue 42): /state and the metric see the withheld confirmations
            AtomicLong oldestSeen = new AtomicLong();
            AtomicReference<Double> metricSeen = new AtomicReference<>(0.0);
            ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
            sampler.scheduleWithFixedDelay(() -> {
                try {
                    JsonNode reader = new ObjectMapper().readTree(Http.get(adminUrl + "/state").body()).path("leaseReader");
                    oldestSeen.accumulateAndGet(reader.path("oldestConfirmationMs").asLong(), Math::max);
                    double age = PrometheusText.sum(PrometheusText.parse(Http.get(adminUrl + "/metrics").body()),
                            "snowstamp_lease_reader_confirmation_age_seconds");
                    metricSeen.accumulateAndGet(age, Math::max);
                } catch (Exception e) {
                    // not up yet: the next sample
                }
            }, 0, 250, TimeUnit.MILLISECONDS);
            try {
                sent = produceSteadily(topics.in());
            } finally {
                sampler.shutdownNow();
            }
            List<ConsumerRecord<byte[], byte[]>> out = broker.consume(topics.out(), sent, Duration.ofSeconds(90));
            assertThat(out).as(child.logs()).hasSize(sent);
            assertThat(child.logs()).contains("confirming nothing for changelog partition 0 for");

            IdLayout layout = IdLayout.preset("snowflake");
            TreeMap<Integer, Long> longestGap = new TreeMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                int partition = p;
                List<ConsumerRecord<byte[], byte[]>> mine = out.stream().filter(r -> r.partition() == partition).toList();
                List<Long> ids = mine.stream().map(NeighbourWaitIT::id).toList();
                assertThat(ids).as("partition %d: IDs increase in input order", p).isSorted().doesNotHaveDuplicates();
                List<Long> offsets = mine.stream().map(NeighbourWaitIT::sourceOffset).toList();
                assertThat(offsets).as("partition %d: each input once, in order", p).isSorted().doesNotHaveDuplicates();
                long gap = 0;
                for (int i = 1; i < ids.size(); i++) {
                    gap = Math.max(gap, layout.decode(ids.get(i)).wallMillis() - layout.decode(ids.get(i - 1)).wallMillis());
                }
                longestGap.put(p, gap);
            }
            System.out.println(guarantee + ": longest gap between two IDs of a partition, by partition: " + longestGap);
            assertThat(longestGap.get(0)).as("partition 0 waited (the hold took effect)").isGreaterThan(5_000);
            // the goal is < 1 s; the bound leaves room for a loaded CI machine and still fails on a thread that waits ~8 s
            assertThat(longestGap.get(1)).as("partition 1, same thread: no gap while partition 0 waits").isLessThan(3_000);
            assertThat(longestGap.get(2)).as("partition 2, same thread: no gap while partition 0 waits").isLessThan(3_000);
            assertThat(child.logs()).doesNotContain("replaced by", "rejoining the group");

            System.out.println(guarantee + ": lease reader's oldest confirmation, the most seen: /state " + oldestSeen.get()
                    + " ms, metric " + metricSeen.get() + " s");
            assertThat(oldestSeen.get()).as("/state leaseReader.oldestConfirmationMs during the 10 s hold").isGreaterThan(5_000);
            assertThat(metricSeen.get()).as("snowstamp_lease_reader_confirmation_age_seconds during the hold").isGreaterThan(5);
            JsonNode readerNow = new ObjectMapper().readTree(Http.get(adminUrl + "/state").body()).path("leaseReader");
            assertThat(readerNow.path("leasesHeld").asInt()).as("%s", readerNow).isEqualTo(PARTITIONS);
            assertThat(readerNow.path("oldestConfirmationMs").asLong()).as("caught up after the hold: %s", readerNow).isLessThan(5_000);    // 0.2-0.4 s quiet; room for a loaded machine, well under the hold

            // the wait is counted where operators look (issue 44): as a lease wait, or under at-least-once a reservation wait
            // when the reservation ran out before the lease's term
            var samples = PrometheusText.parse(Http.get(adminUrl + "/metrics").body());
            double waits = PrometheusText.sum(samples, "snowstamp_lease_waits_total")
                    + PrometheusText.sum(samples, "snowstamp_reservation_waits_total");
            double seconds = PrometheusText.sum(samples, "snowstamp_lease_wait_seconds_total")
                    + PrometheusText.sum(samples, "snowstamp_reservation_wait_seconds_total");
            System.out.println(guarantee + ": waits " + waits + ", seconds waited " + seconds);
            assertThat(waits).isGreaterThanOrEqualTo(1);
            assertThat(seconds).as("about the hold's length").isGreaterThan(5);
            if (guarantee.equals("exactly_once_v2")) {
                assertThat(PrometheusText.sum(samples, "snowstamp_lease_waits_total"))
                        .as("exactly-once reserves in the IDs' own transaction: only the lease waits").isGreaterThanOrEqualTo(1);
            }
        }
    }

    /**
     * Sends a record to every partition every 20 ms for the run: from before the hold begins (8 s after partition 0's
     * first confirmation, at its task's start) to well after it ends.
     */
    private static int produceSteadily(String topic) throws Exception {
        int sent = 0;
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            while (System.nanoTime() - until < 0) {
                for (int p = 0; p < PARTITIONS; p++) {
                    producer.send(new ProducerRecord<>(topic, p, null, ("{\"n\":" + sent + "}").getBytes(StandardCharsets.UTF_8)));
                    sent++;
                }
                producer.flush();
                Thread.sleep(SEND_EVERY_MILLIS);
            }
        }
        return sent;
    }

    private static long id(ConsumerRecord<byte[], byte[]> record) {
        return Long.parseLong(new String(record.headers().lastHeader(IdHeader.ID).value(), StandardCharsets.US_ASCII));
    }

    private static long sourceOffset(ConsumerRecord<byte[], byte[]> record) {
        String source = new String(record.headers().lastHeader(IdHeader.SOURCE).value(), StandardCharsets.US_ASCII);
        return Long.parseLong(source.substring(source.lastIndexOf('/') + 1));
    }
}
