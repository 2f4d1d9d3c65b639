package io.snowstamp.it;

import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A held partition whose records stop reaching its task while the group sees nothing wrong — what a survivor of a
 * 1,024-partition failover once did for minutes — is noticed and recovered: the child stamper's first main consumer
 * never delivers input partition 0 ({@code -Dsnowstamp.test.stall-partition=0}, forced, not hoped for) while partition 1
 * stamps; after {@code recovery.stall-after} the stamper says so in one WARN line, {@code /health/ready} answers 503
 * naming the partition, the metrics count it, the stream thread is replaced, and every record of partition 0 is then
 * stamped. Without the stall watch partition 0 would never stamp (the hook keeps the first consumer's partition paused
 * for good).
 */
@Tag("integration")
@Timeout(240)
class StallIT extends OnSharedBroker {
    private static final int PER_PARTITION = 50;
    @TempDir
    Path work;

    /**
     * @param idleFirst the partitions idle for a while before the input comes (the watch has looked at them with nothing
     *                  delivered: an idle partition that then stalls is a stall all the same)
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "idle first: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void shouldNoticeAPartitionThatStopsStampingWithInputWaitingAndRestartItsStreamThread(boolean idleFirst) throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), io.snowstamp.testing.TestBroker.unique("stall"), topics, "s1")
                .with("recovery.stall-after", "4s").with("admin.port", "0")
                .withJvmArg("-Dsnowstamp.test.stall-partition=0");
        try (ChildJvm child = stamper.start()) {
            String admin = child.adminUrl();
            if (idleFirst) {
                Http.await(admin + "/health/ready", r -> r.status() == 200, 60);
                Thread.sleep(3000);
            }
            produce(topics.in());
            // partition 1 stamps; partition 0 waits behind the stalled consumer until the watch sees it
            Http.Response stalled = Http.await(admin + "/health/ready",
                    r -> r.status() == 503 && r.body().contains("stalledPartitions"), 60);
            assertThat(stalled.json().get("stalledPartitions").toString()).isEqualTo("[0]");
            assertThat(stalled.json().get("reason").asText()).contains("partition 0: " + PER_PARTITION + " records past the committed offset");
            assertThat(Http.get(admin + "/health/live").status()).as("live stays up: the watch replaces the threads").isEqualTo(200);
            // the metrics operations.md names for this, from the same judgement (the partition stays stalled until the new
            // thread stamps it, seconds after the restart); the partition's figures stay while the restarted threads
            // rebalance (registered with the task, they were gone at once: this failed under CI's load)
            var during = io.snowstamp.testing.PrometheusText.parse(Http.get(admin + "/metrics").body());
            assertThat(io.snowstamp.testing.PrometheusText.sum(during, "snowstamp_stalled_partitions")).isEqualTo(1.0);
            assertThat(io.snowstamp.testing.PrometheusText.named(during, "snowstamp_input_waiting_records"))
                    .filteredOn(sample -> "0".equals(sample.labels().get("partition"))).singleElement()
                    .satisfies(sample -> assertThat(sample.value()).isEqualTo(PER_PARTITION));
            assertThat(io.snowstamp.testing.PrometheusText.named(during, "snowstamp_input_stuck_seconds"))
                    .filteredOn(sample -> "0".equals(sample.labels().get("partition"))).singleElement()
                    .satisfies(sample -> assertThat(sample.value()).isGreaterThanOrEqualTo(4.0));

            List<ConsumerRecord<byte[], byte[]>> out = broker.consume(topics.out(), 2 * PER_PARTITION, Duration.ofSeconds(90));
            assertThat(out).as(child.logs()).hasSize(2 * PER_PARTITION);
            assertThat(out.stream().filter(r -> r.partition() == 0)).hasSize(PER_PARTITION);
            assertThat(out.stream().map(r -> new String(r.headers().lastHeader(IdHeader.ID).value(), StandardCharsets.US_ASCII)))
                    .doesNotHaveDuplicates();

            String logs = child.logs();
            // one WARN line per stall (README, operations.md)
            assertThat(logs).containsOnlyOnce("-Dsnowstamp.test.stall-partition=0")
                    .containsOnlyOnce("WARN  StallWatch - stalled: 1 of 2 partitions held here have input waiting and issued no ID for")
                    .contains("; restarting the stream threads", "replaced by");
            Http.await(admin + "/health/ready", r -> r.status() == 200, 60);
            String metrics = Http.get(admin + "/metrics").body();
            var samples = io.snowstamp.testing.PrometheusText.parse(metrics);
            assertThat(io.snowstamp.testing.PrometheusText.sum(samples, "snowstamp_stall_restarts_total")).isEqualTo(1.0);
            assertThat(io.snowstamp.testing.PrometheusText.sum(samples, "snowstamp_stalled_partitions")).isZero();
        }
    }

    /** {@code recovery.stall-after=0} turns the watch off: the same forced stall is never noticed nor recovered. */
    @Test
    void shouldLeaveAStallAloneWhenTheWatchIsOff() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), io.snowstamp.testing.TestBroker.unique("stall-off"), topics, "s1")
                .with("recovery.stall-after", "0").with("admin.port", "0")
                .withJvmArg("-Dsnowstamp.test.stall-partition=0");
        try (ChildJvm child = stamper.start()) {
            String admin = child.adminUrl();
            produce(topics.in());
            List<ConsumerRecord<byte[], byte[]>> out = broker.consume(topics.out(), PER_PARTITION, Duration.ofSeconds(90));
            assertThat(out).as(child.logs()).hasSize(PER_PARTITION).allSatisfy(r -> assertThat(r.partition()).isEqualTo(1));
            // three times the other test's stall-after, which its watch needs once: a watch would have acted by now
            Thread.sleep(12_000);
            assertThat(broker.consume(topics.out(), PER_PARTITION + 1, Duration.ofSeconds(2))).as(child.logs()).hasSize(PER_PARTITION);
            assertThat(Http.get(admin + "/health/ready").status()).isEqualTo(200);
            assertThat(child.logs()).doesNotContain("StallWatch", "replaced by");
            assertThat(io.snowstamp.testing.PrometheusText.sum(io.snowstamp.testing.PrometheusText.parse(Http.get(admin + "/metrics").body()),
                    "snowstamp_stall_restarts_total")).isZero();
        }
    }

    private static void produce(String topic) {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; n < PER_PARTITION; n++) {
                for (int p = 0; p < 2; p++) {
                    producer.send(new ProducerRecord<>(topic, p, null, ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8)));
                }
            }
            producer.flush();
        }
    }
}
