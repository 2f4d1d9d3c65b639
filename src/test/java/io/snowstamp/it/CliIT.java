package io.snowstamp.it;

import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** The CLI commands, in-process through picocli, against a real broker. */
@Tag("integration")
@Timeout(300)
class CliIT extends OnSharedBroker {
    @TempDir
    Path work;

    private String[] kafka(String... args) {
        return Cli.concat(args, "--bootstrap-servers", broker.bootstrapServers());
    }

    @Test
    void shouldCreateTopicsThenReportThemOk() throws Exception {
        Path dir = work.resolve("topics");
        Files.createDirectories(dir);
        String name = TestBroker.unique("applied");
        Files.writeString(dir.resolve(name + ".properties"), "partitions=3\nreplication.factor=1\nretention.ms=3600000\n");
        String[] args = kafka("topics", "apply", "--dir", dir.toString(), "--set", "input.topic=" + name + "-in",
                "--set", "output.topic=" + name + "-out", "--set", "dlq.topic=" + name + "-dlq");

        Cli.Result first = Cli.run(args);
        assertThat(first.exitCode()).as(first.toString()).isZero();
        // a file's factor gets the minimum that goes with it; a topic without a file gets the cluster's choice (one broker here)
        assertThat(first.outLines()).contains("created " + name + " partitions=3 replication.factor=1 min.insync.replicas=1",
                "created " + name + "-in partitions=1 replication.factor=1 min.insync.replicas=1 (auto: 1 broker)");
        ConfigEntry minInsync = TestBroker.topicConfig(broker.bootstrapServers(), name + "-in", "min.insync.replicas");
        assertThat(minInsync.source()).as("set on the topic, not inherited").isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(minInsync.value()).isEqualTo("1");

        Cli.Result second = Cli.run(args);
        assertThat(second.outLines()).contains("ok " + name + " partitions=3 replication.factor=1 min.insync.replicas=1");

        Files.writeString(dir.resolve(name + ".properties"), "partitions=5\nretention.ms=60000\n");
        Cli.Result drift = Cli.run(Cli.concat(args, "--check"));
        assertThat(drift.exitCode()).as(drift.toString()).isEqualTo(1);
        assertThat(drift.out()).contains("drift " + name + ": partitions=3 but the spec says 5; retention.ms=3600000 but the spec says 60000");
    }

    @Test
    void shouldProduceConsumeAndVerifyAStampedTopic() throws Exception {
        String topic = TestBroker.unique("stamped");
        broker.createTopic(topic, 2);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int i = 0; i < 10; i++) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, i % 2, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        (i == 3 ? "not json" : "{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
                record.headers().add(IdHeader.ID, String.valueOf(1000 + i).getBytes(StandardCharsets.US_ASCII));
                producer.send(record);
            }
        }

        Cli.Result consume = Cli.run(kafka("consume", "--topic", topic, "--max", "10", "--timeout", "10s"));
        assertThat(consume.exitCode()).as(consume.toString()).isZero();
        assertThat(consume.outLines()).hasSize(10)
                .contains("{\"partition\":0,\"offset\":0,\"key\":\"k0\",\"id\":1000,\"value\":{\"i\":0}}",
                        "{\"partition\":1,\"offset\":1,\"key\":\"k3\",\"id\":1003,\"value\":\"not json\"}");

        Cli.Result clean = Cli.run(kafka("verify", "--topic", topic));
        assertThat(clean.lastLine()).as(clean.toString()).isEqualTo("records=10 duplicates=0 missing=0 extra=0");
        assertThat(clean.exitCode()).isZero();

        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            ProducerRecord<byte[], byte[]> copy = new ProducerRecord<>(topic, 1, null, "{}".getBytes(StandardCharsets.UTF_8));
            copy.headers().add(IdHeader.ID, "1004".getBytes(StandardCharsets.US_ASCII));
            producer.send(copy);
        }
        Cli.Result dirty = Cli.run(kafka("verify", "--topic", topic));
        assertThat(dirty.exitCode()).as(dirty.toString()).isEqualTo(1);
        assertThat(dirty.lastLine()).isEqualTo("records=11 duplicates=1 missing=0 extra=0");
        assertThat(dirty.out()).contains("1004");
    }

    @Test
    void shouldProduceSampleEventsAndLinesFromAFile() throws Exception {
        String topic = TestBroker.unique("produced");
        broker.createTopic(topic, 3);
        Cli.Result samples = Cli.run(kafka("produce", "--topic", topic, "--count", "250"));
        assertThat(samples.exitCode()).as(samples.toString()).isZero();
        assertThat(samples.out()).contains("produced 250 records to " + topic);

        Path file = work.resolve("lines.jsonl");
        Files.writeString(file, "{\"a\":1}\n\n{\"a\":2}\n{\"a\":3}\n");
        Cli.Result lines = Cli.run(kafka("produce", "--topic", topic, "--file", file.toString()));
        assertThat(lines.out()).as(lines.toString()).contains("produced 3 records to " + topic);

        Cli.Result consume = Cli.run(kafka("consume", "--topic", topic, "--idle-timeout", "3s"));
        assertThat(consume.outLines()).hasSize(253);
        assertThat(consume.out()).contains("\"value\":{\"a\":2}");
    }

    @Test
    void shouldFailWithOneLineForAMissingTopicOrBadConfiguration() {
        Cli.Result missing = Cli.run(kafka("verify", "--topic", "no-such-topic-" + System.nanoTime(), "--timeout", "20s"));
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.err().strip().lines()).as(missing.toString()).hasSize(1);
        assertThat(missing.err()).startsWith("error: topic no-such-topic-").contains("does not exist");

        Cli.Result badKey = Cli.run(kafka("consume", "--set", "id.wroker-offset=3"));
        assertThat(badKey.exitCode()).isEqualTo(2);
        assertThat(badKey.err()).as(badKey.toString()).startsWith("error: unknown configuration key 'id.wroker-offset'");

        Cli.Result badValue = Cli.run("decode", "--set", "id.worker-offset=5000", "1");
        assertThat(badValue.exitCode()).isEqualTo(2);
        assertThat(badValue.err().trim()).as(badValue.toString())
                .isEqualTo("error: id.worker-offset=5000 is invalid: accepted 0..1023 (the layout has 10 worker bits) (from --set)");

        Cli.Result usage = Cli.run("consume", "--no-such-flag");
        assertThat(usage.exitCode()).isEqualTo(2);
        assertThat(usage.err().strip().lines()).hasSize(1);
    }

    @Test
    void shouldDecodeIdsWithTheConfiguredLayout() {
        // worker 3, sequence 7, one second after the epoch (2020-01-01T00:00:01Z)
        long id = (1000L << 22) | (3L << 12) | 7;
        Cli.Result decoded = Cli.run("decode", String.valueOf(id));
        assertThat(decoded.out().trim()).as(decoded.toString()).isEqualTo("{\"id\":" + id
                + ",\"time\":\"2020-01-01T00:00:01Z\",\"worker\":3,\"datacenter\":0,\"sequence\":7}");

        Cli.Result garbage = Cli.run("decode", "12x");
        assertThat(garbage.exitCode()).as("a bad argument is a usage error").isEqualTo(2);
        assertThat(garbage.err()).contains("ID '12x' is invalid");
    }

    @Test
    void shouldRunTheDemoOnAnEmbeddedBrokerTwiceWithoutRepeatingAnId() {
        String[] demo = {"demo", "--events", "300", "--data-dir", work.resolve("kafka").toString(),
                "--set", "state.dir=" + work.resolve("streams")};
        Cli.Result first = Cli.run(demo);
        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.out()).contains("produced 300 events to events.raw", "records=300 duplicates=0 missing=0 extra=0");
        assertThat(first.lastLine()).startsWith("demo: stamped 300 events with IDs ").contains("clean");

        // the broker data and the stamper state are kept: a second run continues above the first
        Cli.Result second = Cli.run(demo);
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.out()).contains("records=600 duplicates=0 missing=0 extra=0");
        // the README's promise: the new IDs continue above the old ones (not only none repeated)
        assertThat(idRange(second.lastLine())[0]).as("the second run's lowest ID against the first run's highest")
                .isGreaterThan(idRange(first.lastLine())[1]);
    }

    /** The lowest and highest ID of a demo's last line ("... with IDs MIN..MAX (workers ..."). */
    private static long[] idRange(String line) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("with IDs (\\d+)\\.\\.(\\d+) ").matcher(line);
        assertThat(m.find()).as(line).isTrue();
        return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
    }

    @Test
    void shouldRunTheBrokerCommandForOtherClients() throws Exception {
        try (ChildJvm child = ChildJvm.start(work.resolve("logs"), "broker", "broker", "--port", "0",
                "--data-dir", work.resolve("broker").toString())) {
            child.awaitOutput("bootstrap.servers=127.0.0.1:", 90);
            String line = Arrays.stream(child.stdout().split("\\R")).filter(l -> l.startsWith("bootstrap.servers=")).findFirst().orElseThrow();
            String servers = line.substring("bootstrap.servers=".length());

            // a command without --bootstrap-servers finds the broker through the shared data directory
            Cli.Result topics = Cli.run("topics", "apply", "--data-dir", work.resolve("broker").toString());
            assertThat(topics.exitCode()).as(topics.toString()).isZero();
            assertThat(topics.out()).contains("created events.raw partitions=4");
            Cli.Result produce = Cli.run("produce", "--bootstrap-servers", servers, "--count", "5");
            assertThat(produce.out()).as(produce.toString()).contains("produced 5 records to events.raw");

            Cli.Result again = Cli.run("broker", "--port", "0", "--data-dir", work.resolve("broker").toString());
            assertThat(again.exitCode()).isEqualTo(1);
            assertThat(again.err()).contains("a broker already runs on");
            assertThat(child.terminate(60)).isIn(0, 143);
        }
    }
}
