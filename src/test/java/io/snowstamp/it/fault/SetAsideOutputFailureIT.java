package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * At-least-once: records set aside, then stamped while the output refuses every write ({@code max.message.bytes} below
 * any batch: the broker rejects it, the stamper stops), lose nothing, though their input offsets are committed and the
 * deletes of their store entries land (the changelog takes writes). Before the fix the drain deleted an entry at its
 * stamping: the restarted stamper restored none of them, and they were lost. Deleted only after a commit flushed its
 * output, an entry is restored set aside and stamped again once the output takes writes.
 */
@Tag("integration")
@Timeout(300)
class SetAsideOutputFailureIT extends OnSharedBroker {
    private static final long RECORDS = 300;

    @TempDir
    Path work;

    @Test
    void shouldLoseNoRecordSetAsideWhoseOutputFailedUnderAtLeastOnce() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 1);
        maxMessageBytes(topics.out(), "1");
        NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, RECORDS);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "aside-1")
                .with("processing.guarantee", "at_least_once")
                .settingRecordsAsideAtStart()
                // the input offsets of the records set aside commit while they wait
                .with("kafka.commit.interval.ms", "100");

        try (ChildJvm refused = spec.start()) {
            // set aside (the lead policy holds them); the drain stamps them once the lease is confirmed and the clock within
            // the lead (which of the two comes last depends on the machine's pace): the broker refuses their output
            refused.awaitLog("holding records back", 60);
            refused.awaitLog("stopping so that nothing is dropped", 60);
            assertThat(refused.terminate(60)).as(refused.logs()).isNotNegative();
        }
        maxMessageBytes(topics.out(), "1048588");
        try (ChildJvm stamper = spec.start()) {
            Verification verify = Verification.awaitSettled(broker.bootstrapServers(), topics.out(), topics.in(), RECORDS,
                    Duration.ofSeconds(60));

            assertThat(verify.missing()).as("records set aside lost\n%s\n%s", verify, stamper.logs()).isZero();
            assertThat(verify.duplicates()).as(verify.toString()).isZero();
            assertThat(stamper.isAlive()).as(stamper.logs()).isTrue();
            // and the entries go once a commit passed: Kafka Streams' commits reach the store's count outside the driver too
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            List<String> held = StampedRecords.undeleted(broker.bootstrapServers(), spec.applicationId() + "-pending-records-changelog");
            while (!held.isEmpty() && System.nanoTime() < deadline) {
                TimeUnit.SECONDS.sleep(1);
                held = StampedRecords.undeleted(broker.bootstrapServers(), spec.applicationId() + "-pending-records-changelog");
            }
            assertThat(held).as("store entries never deleted\n%s", stamper.logs()).isEmpty();
        }
    }

    private void maxMessageBytes(String topic, String bytes) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("max.message.bytes", bytes), AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS);
        }
    }
}
