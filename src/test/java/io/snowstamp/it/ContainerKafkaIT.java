package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.testing.Cli;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stamper against the official {@code apache/kafka:4.3.1} image, i.e. a broker snowstamp did
 * not start itself. Runs where a Docker engine exists; skipped (not failed) where none does.
 */
@Tag("integration")
@Testcontainers(disabledWithoutDocker = true)
@Timeout(600)
class ContainerKafkaIT {
    private static final int RECORDS = 20_000;

    @Container
    static final KafkaContainer KAFKA = new KafkaContainer("apache/kafka:4.3.1");

    @TempDir
    Path work;

    @Test
    void shouldStampEveryRecordOnceOnTheOfficialImage() throws Exception {
        String servers = KAFKA.getBootstrapServers();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers))) {
            admin.createTopics(List.of(new NewTopic("events.raw", 4, (short) 1), new NewTopic("events.stamped", 4, (short) 1),
                    new NewTopic("events.dlq", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), Map.of("kafka.bootstrap.servers", servers,
                "state.dir", work.toString(), "instance.id", "container-it", "id.worker-registry", "off"));
        try (StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis)) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(120))).isTrue();
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>("events.raw", ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
                }
            }
            Cli.Result verify = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                verify = Cli.run("verify", "--bootstrap-servers", servers, "--source", "events.raw");
                if (verify.exitCode() == 0) {
                    break;
                }
                Thread.sleep(1000);
            }
            assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=" + RECORDS + " duplicates=0 missing=0 extra=0");
        }
    }
}
