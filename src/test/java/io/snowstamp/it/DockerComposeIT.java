package io.snowstamp.it;

import io.snowstamp.testing.Cli;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.PrometheusText;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docker compose up} for real: the broker, the topics job and the stamper from
 * docker-compose.yml; events produced from the host (localhost:29092) come out stamped and verified,
 * and the admin port answers. Runs where a Docker engine exists and the image was built
 * ({@code mvn -Pimage -DskipTests package jib:dockerBuild}); skipped (not failed) otherwise.
 */
@Tag("integration")
@Testcontainers(disabledWithoutDocker = true)
@Timeout(600)
class DockerComposeIT {
    private static final int RECORDS = 1_000;

    @Test
    void shouldStampWhatTheHostProducesWithDockerComposeUp() throws Exception {
        boolean imageBuilt;
        try {
            DockerClientFactory.instance().client().inspectImageCmd("snowstamp:latest").exec();
            imageBuilt = true;
        } catch (RuntimeException e) {
            imageBuilt = false;
        }
        Assumptions.assumeTrue(imageBuilt, "image snowstamp:latest not built: mvn -Pimage -DskipTests package jib:dockerBuild");

        try (ComposeContainer compose = new ComposeContainer(new File("docker-compose.yml"))
                .withExposedService("snowstamp", 8080, Wait.forHttp("/health/ready").forStatusCode(200)
                        .withStartupTimeout(Duration.ofMinutes(5)))
                .withRemoveVolumes(true)) {
            compose.start();
            String admin = "http://" + compose.getServiceHost("snowstamp", 8080) + ":" + compose.getServicePort("snowstamp", 8080);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                    Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:29092"), new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int n = 0; n < RECORDS; n++) {
                    producer.send(new ProducerRecord<>("events.raw", ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8)));
                }
            }
            Cli.Result verify = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                verify = Cli.run("verify", "--bootstrap-servers", "localhost:29092", "--source", "events.raw");
                if (verify.exitCode() == 0 && verify.lastLine().startsWith("records=" + RECORDS + " ")) {
                    break;
                }
                Thread.sleep(1000);
            }
            assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=" + RECORDS + " duplicates=0 missing=0 extra=0");
            assertThat(PrometheusText.sum(PrometheusText.parse(Http.get(admin + "/metrics").body()), "snowstamp_ids_issued_total"))
                    .isEqualTo(RECORDS);
            assertThat(Http.get(admin + "/state").json().get("partitions")).hasSize(4);
        }
    }
}
