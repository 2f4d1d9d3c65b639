package io.snowstamp.it;

import io.snowstamp.id.IdLayout;
import io.snowstamp.registry.RegistryLog;
import io.snowstamp.registry.WorkerRegistry;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * id-spaces.md, the record format: keys starting with {@code _} are reserved for later record kinds
 * and readers skip them, so a registry holding such records is neither unreadable (which refuses
 * every claim) nor read as claims. What a newer version may write must not stop this one.
 */
@Tag("integration")
@Timeout(120)
class ReservedRegistryKeysIT extends OnSharedBroker {
    @Test
    void shouldSkipRecordsUnderReservedKeysAndClaimBesideThem() throws Exception {
        String registry = TestBroker.unique("workers");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(registry, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(60, TimeUnit.SECONDS);
            io.snowstamp.recovery.ChangelogWriter.awaitLeaders(admin, registry, 1, Duration.ofSeconds(60));
        }
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            // no claim at all, and a claim's body of another version under a reserved key: both skipped
            producer.send(new ProducerRecord<>(registry, 0, bytes("_schema"), bytes("not a claim")));
            producer.send(new ProducerRecord<>(registry, 0, bytes("_note/default/0/other/0"), bytes("{\"version\":99}")));
            producer.flush();
        }
        Properties client = new Properties();
        client.put("bootstrap.servers", broker.bootstrapServers());
        try (RegistryLog log = RegistryLog.open(client, registry, Duration.ofSeconds(30))) {
            RegistryLog.Snapshot snapshot = log.read();
            assertThat(snapshot.unreadable()).as("nothing unreadable").isEmpty();
            assertThat(snapshot.entries()).as("no claim read from a reserved key").isEmpty();
        }
        try (WorkerRegistry registryClient = new WorkerRegistry(client, registry, Duration.ofSeconds(30), System::currentTimeMillis)) {
            WorkerRegistry.Lease lease = registryClient.claim(new WorkerRegistry.Request("default", 0, "beside-reserved",
                    IdLayout.preset("snowflake"), 2, 0, "in", "out", "beside-reserved", null, Duration.ofSeconds(2)));
            assertThat(lease.firstWorker()).as("the claim is granted").isZero();
            assertThat(registryClient.readable().entries()).as("only the claim is read").hasSize(1);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
