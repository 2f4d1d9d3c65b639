package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.sequence.SequenceState;
import io.snowstamp.sequence.SequenceStateSerde;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Order;
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
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sequence mode on a real broker, in-process: tags administered through the CLI, unknown tags to the
 * dead-letter topic or auto-created, a step change, {@code tags list}, clean restarts (no gap), and a
 * new application id on the same topics (the tail scan alone protects the numbers). The fault test
 * with killed child JVMs is {@link SequenceFaultIT}.
 */
@Tag("integration")
@Order(8)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(300)
class SequenceIT extends OnSharedBroker {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path work;

    /** Topics and settings of one scenario. */
    private record Setup(String in, String out, String dlq, String tags, String app) {
        static Setup create(String name, int inPartitions, int outPartitions) throws Exception {
            Setup setup = new Setup(TestBroker.unique(name + "-in"), TestBroker.unique(name + "-out"), TestBroker.unique(name + "-dlq"),
                    TestBroker.unique(name + "-tags"), TestBroker.unique(name + "-app"));
            broker.createTopic(setup.in, inPartitions);
            broker.createTopic(setup.out, outPartitions);
            broker.createTopic(setup.dlq, 1);
            return setup;
        }

        /** The settings as --set arguments for the CLI. */
        String[] cli(String... more) {
            List<String> args = new ArrayList<>(List.of("--bootstrap-servers", broker.bootstrapServers()));
            settings(more).forEach((key, value) -> {
                args.add("--set");
                args.add(key + "=" + value);
            });
            return args.toArray(String[]::new);
        }

        Map<String, String> settings(String... more) {
            Map<String, String> settings = new TreeMap<>(Map.of("id.mode", "sequence", "input.topic", in, "output.topic", out,
                    "dlq.topic", dlq, "sequence.tags-topic", tags, "application.id", app));
            for (int i = 0; i < more.length; i += 2) {
                settings.put(more[i], more[i + 1]);
            }
            return settings;
        }
    }

    private StreamsRunner runner(Setup setup, String... more) throws Exception {
        StreamsRunner runner = new StreamsRunner(config(setup, more), System::currentTimeMillis);
        runner.start();
        assertThat(runner.awaitRunning(Duration.ofSeconds(120))).isTrue();
        return runner;
    }

    private SnowstampConfig config(Setup setup, String... more) {
        Map<String, String> settings = new HashMap<>(setup.settings(more));
        settings.put("kafka.bootstrap.servers", broker.bootstrapServers());
        settings.putIfAbsent("state.dir", work.resolve("state").toString());
        settings.putIfAbsent("instance.id", "seq-it");
        return ConfigLoader.load(null, Map.of(), settings);
    }

    private static Cli.Result cli(Setup setup, String[] more, String... command) {
        Cli.Result result = Cli.run(Cli.concat(command, setup.cli(more)));
        assertThat(result.exitCode()).as(result.toString()).isZero();
        return result;
    }

    private static Cli.Result cli(Setup setup, String... command) {
        return cli(setup, new String[0], command);
    }

    private static void produce(String topic, String tag, int count) {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, tag == null ? null : tag.getBytes(StandardCharsets.UTF_8),
                        ("{\"tag\":\"" + tag + "\",\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    /** Every record of {@code topic}, read_committed, to its end. */
    private static List<ConsumerRecord<byte[], byte[]>> read(String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        TopicReader.readToEnd(props, topic, Duration.ofSeconds(60), records::add);
        return records;
    }

    /** Reads output and dead letters until {@code total} records are there, bounded. */
    private static void awaitRecords(Setup setup, int total) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (read(setup.out).size() + read(setup.dlq).size() < total && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
    }

    /** Waits until the stamper's global tags table has the tag's revision (it follows the topic a moment later). */
    private static void awaitRevision(StreamsRunner runner, String tag, long revision) throws InterruptedException {
        var store = runner.streams().store(org.apache.kafka.streams.StoreQueryParameters.fromNameAndType(SequenceNames.TAGS_STORE,
                org.apache.kafka.streams.state.QueryableStoreTypes.<String, byte[]>keyValueStore()));
        var serde = new io.snowstamp.sequence.TagDefinitionSerde();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            byte[] bytes = store.get(tag);
            if (bytes != null && serde.deserialize(null, bytes).revision() >= revision) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the stamper's tags table did not reach revision " + revision + " of " + tag + " in 30 s");
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** Numbers per tag in output order (offset order per partition, partitions one after the other). */
    private static Map<String, List<Long>> numbers(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<String, List<Long>> numbers = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            numbers.computeIfAbsent(header(record, IdHeader.TAG), ignored -> new ArrayList<>())
                    .add(Long.parseLong(header(record, IdHeader.ID)));
        }
        return numbers;
    }

    /**
     * The segments of {@code tag} in the changelog of {@code app}, in order, as {@code start..maxId/step r revision};
     * the writes that only record how far the tag got (checkpoints, starts) repeat the segment and are left out.
     */
    private static List<String> segments(String app, String tag) {
        List<String> segments = new ArrayList<>();
        SequenceStateSerde serde = new SequenceStateSerde();
        for (ConsumerRecord<byte[], byte[]> record : read(SequenceNames.changelogTopic(app))) {
            if (new String(record.key(), StandardCharsets.UTF_8).equals(tag)) {
                SequenceState.TagSegment s = (SequenceState.TagSegment) serde.deserialize(null, record.value());
                String segment = s.segmentStart() + ".." + s.maxId() + "/" + s.step() + "r" + s.revision();
                if (segments.isEmpty() || !segments.get(segments.size() - 1).equals(segment)) {
                    segments.add(segment);
                }
            }
        }
        return segments;
    }

    private static Map<String, JsonNode> listed(Cli.Result list) throws Exception {
        Map<String, JsonNode> tags = new TreeMap<>();
        for (String line : list.outLines()) {
            JsonNode node = JSON.readTree(line);
            tags.put(node.get("tag").asText(), node);
        }
        return tags;
    }

    /**
     * sequences.md: {@code /health/*} work in sequence mode (ready = Kafka Streams RUNNING); {@code /state} says where the
     * tags are instead of per-partition worker state; per-partition metrics are snowflake only.
     */
    @Test
    void shouldServeHealthAndStateInSequenceMode() throws Exception {
        Setup setup = Setup.create("seq-admin", 2, 2);
        cli(setup, "tags", "create", "order");
        SnowstampConfig config = config(setup, "admin.port", "0");
        StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
        try (runner; io.snowstamp.admin.AdminServer admin = io.snowstamp.admin.AdminServer.start(config, runner, System::currentTimeMillis)) {
            String base = "http://127.0.0.1:" + admin.getPort();
            assertThat(io.snowstamp.testing.Http.get(base + "/health/ready").status()).as("before Kafka Streams runs").isEqualTo(503);
            runner.start();
            io.snowstamp.testing.Http.await(base + "/health/ready", r -> r.status() == 200, 120);
            produce(setup.in, "order", 5);
            awaitRecords(setup, 5);
            assertThat(io.snowstamp.testing.Http.get(base + "/health/live").status()).isEqualTo(200);
            JsonNode state = io.snowstamp.testing.Http.get(base + "/state").json();
            assertThat(state.get("notes").toString()).contains("id.mode=sequence", "tags list");
            String metrics = io.snowstamp.testing.Http.get(base + "/metrics").body();
            assertThat(metrics).contains("snowstamp_ready").doesNotContain("snowstamp_since_last_stamp_seconds{");
        }
    }

    @Test
    void shouldNumberRegisteredTagsSendUnknownOnesToTheDeadLetterTopicAndChangeStepsAtTheNextSegment() throws Exception {
        Setup setup = Setup.create("seq", 3, 2);
        assertThat(cli(setup, "tags", "create", "order", "--start", "1001", "--step", "100").out())
                .isEqualTo("created order start=1001 step=100 revision=1\n");
        cli(setup, "tags", "create", "invoice", "--step", "7");
        Cli.Result again = Cli.run(Cli.concat(new String[] {"tags", "create", "order"}, setup.cli()));
        assertThat(again.exitCode()).isEqualTo(1);
        assertThat(again.err()).contains("tag 'order' is registered already (start 1001, step 100, revision 1)");

        try (StreamsRunner runner = runner(setup)) {
            produce(setup.in, "order", 150);
            produce(setup.in, "invoice", 10);
            produce(setup.in, "nope", 5);
            awaitRecords(setup, 165);
            assertThat(cli(setup, "tags", "set-step", "order", "1000").out())
                    .isEqualTo("changed order step=1000 (was 100) revision=2; applies from the tag's next segment\n");
            awaitRevision(runner, "order", 2);
            produce(setup.in, "order", 100);
            awaitRecords(setup, 265);
        }

        Map<String, List<Long>> numbers = numbers(read(setup.out));
        List<Long> order = new ArrayList<>();
        for (long n = 1001; n <= 1250; n++) {
            order.add(n);
        }
        assertThat(numbers.get("order")).as("dense: one run, the step change included").isEqualTo(order);
        assertThat(numbers.get("invoice")).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        List<ConsumerRecord<byte[], byte[]>> dead = read(setup.dlq);
        assertThat(dead).hasSize(5).allSatisfy(record -> {
            assertThat(header(record, IdHeader.ERROR)).isEqualTo("unknown-tag");
            assertThat(header(record, "__streams.errors.topic")).isEqualTo(setup.in);
        });

        assertThat(segments(setup.app, "order")).as("one reservation per segment; the new step from the segment after the change")
                .containsExactly("1001..1100/100r1", "1101..1200/100r1", "1201..2200/1000r2");

        Map<String, JsonNode> listed = listed(cli(setup, "tags", "list"));
        assertThat(listed).containsOnlyKeys("order", "invoice");
        Map<String, List<Long>> stamped = numbers(read(setup.out));
        long lastOrder = stamped.get("order").stream().mapToLong(Long::longValue).max().orElseThrow();
        // after the clean stop (exactly-once, no checkpoint within the test: every 30 s) the changelog names the last
        // number issued: the stop's last commit wrote it
        assertThat(listed.get("order").toString()).isEqualTo("{\"tag\":\"order\",\"registered\":true,\"start\":1001,\"step\":1000,"
                + "\"revision\":2,\"max_id\":2200,\"issued\":" + lastOrder + ",\"partition\":"
                + io.snowstamp.sequence.Tags.partition("order", 2) + "}");
        assertThat(listed.get("invoice").get("issued").asLong()).as("the last invoice number, after a clean stop")
                .isEqualTo(stamped.get("invoice").stream().mapToLong(Long::longValue).max().orElseThrow());
        assertThat(listed.get("invoice").get("max_id").asLong()).isEqualTo(14);
        assertThat(listed.get("invoice").get("start").asLong()).as("sequence.default-start").isEqualTo(1);

        Cli.Result verify = cli(setup, "verify", "--mode", "sequence", "--source", setup.in, "--dlq", setup.dlq);
        assertThat(verify.outLines()).contains(
                "tag invoice: records=10 numbers=1..10 gaps=0 skipped=0 duplicates=0 decreases=0 partitions=["
                        + io.snowstamp.sequence.Tags.partition("invoice", 2) + "]",
                "dead letters: 5 in " + setup.dlq);
        assertThat(verify.lastLine()).isEqualTo("records=260 duplicates=0 missing=0 extra=0");
    }

    @Test
    void shouldAutoCreateUnknownTagsWhenConfigured() throws Exception {
        Setup setup = Setup.create("auto", 2, 2);
        // at-least-once: the clean-close marker names each tag's last number issued
        String[] auto = {"sequence.auto-create", "true", "sequence.default-start", "10", "sequence.default-step", "5",
                "processing.guarantee", "at_least_once"};
        cli(setup, auto, "tags", "create", "registered", "--start", "500");

        try (StreamsRunner ignored = runner(setup, auto)) {
            produce(setup.in, "alpha", 12);
            produce(setup.in, "registered", 3);
            awaitRecords(setup, 15);
        }

        Map<String, List<Long>> numbers = numbers(read(setup.out));
        assertThat(numbers.get("alpha")).containsExactly(10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L, 21L);
        assertThat(numbers.get("registered")).containsExactly(500L, 501L, 502L);
        assertThat(read(setup.dlq)).isEmpty();
        Map<String, JsonNode> listed = listed(cli(setup, auto, "tags", "list"));
        assertThat(listed.get("alpha").toString()).startsWith("{\"tag\":\"alpha\",\"registered\":false,\"start\":null,\"step\":null,"
                + "\"revision\":null,\"max_id\":24,\"issued\":21,");
        assertThat(listed.get("registered").get("issued").asLong()).as("the last number issued, after a clean stop").isEqualTo(502);
        assertThat(listed.get("registered").get("step").asLong()).as("sequence.default-step").isEqualTo(5);
    }

    @Test
    void shouldLeaveNoGapWhenTheStamperStopsCleanlyAndStartsAgainHereOrOnAnotherMachine() throws Exception {
        Setup setup = Setup.create("restart", 2, 2);
        cli(setup, "tags", "create", "order", "--start", "1", "--step", "100");
        String[] fast = {"sequence.checkpoint-interval", "1s"};
        try (StreamsRunner ignored = runner(setup, fast)) {
            produce(setup.in, "order", 150);
            awaitRecords(setup, 150);
            Thread.sleep(2_000);                // a checkpoint records 150 as issued
            produce(setup.in, "order", 20);     // after the checkpoint: only the next start's scan sees them
            awaitRecords(setup, 170);
        }
        try (StreamsRunner ignored = runner(setup, fast)) {
            produce(setup.in, "order", 30);
            awaitRecords(setup, 200);
        }
        // another machine: empty state directory, the store restored from the changelog
        try (StreamsRunner ignored = runner(setup, "sequence.checkpoint-interval", "1s", "instance.id", "seq-it-elsewhere",
                "state.dir", work.resolve("state-elsewhere").toString())) {
            produce(setup.in, "order", 30);
            awaitRecords(setup, 230);
        }

        List<Long> dense = new ArrayList<>();
        for (long n = 1; n <= 230; n++) {
            dense.add(n);
        }
        assertThat(numbers(read(setup.out)).get("order")).as("two clean restarts, no gap").isEqualTo(dense);
        assertThat(segments(setup.app, "order")).as("no segment reserved by a start")
                .containsExactly("1..100/100r1", "101..200/100r1", "201..300/100r1");
        Cli.Result verify = cli(setup, "verify", "--mode", "sequence", "--source", setup.in);
        assertThat(verify.outLines()).contains("tag order: records=230 numbers=1..230 gaps=0 skipped=0 duplicates=0 decreases=0"
                + " partitions=[" + io.snowstamp.sequence.Tags.partition("order", 2) + "]");
        assertThat(verify.lastLine()).isEqualTo("records=230 duplicates=0 missing=0 extra=0");
    }

    @Test
    void shouldContinueAboveTheOutputUnderANewApplicationIdAndRepeatWithoutTheTailScan() throws Exception {
        Setup first = Setup.create("newapp", 2, 3);
        cli(first, "tags", "create", "order", "--start", "1", "--step", "50");
        produce(first.in, "order", 120);
        try (StreamsRunner ignored = runner(first)) {
            awaitRecords(first, 120);
        }
        assertThat(numbers(read(first.out)).get("order")).hasSize(120).last().isEqualTo(120L);

        // a new application id: new consumer group (the input is stamped again), new, empty changelog
        Setup second = new Setup(first.in, first.out, first.dlq, first.tags, TestBroker.unique("newapp-app2"));
        try (StreamsRunner ignored = runner(second, "instance.id", "seq-it-2")) {
            awaitRecords(second, 240);
        }
        List<Long> order = numbers(read(first.out)).get("order");
        assertThat(order).hasSize(240);
        assertThat(order.get(120)).as("above the 120 numbers already in the output, not from start=1 again").isEqualTo(121);
        Cli.Result verify = cli(second, "verify", "--mode", "sequence");
        assertThat(verify.lastLine()).isEqualTo("records=240 duplicates=0 missing=0 extra=0");

        // the same without the tail scan: only the (empty) changelog is left, and numbers repeat
        Setup third = new Setup(first.in, first.out, first.dlq, first.tags, TestBroker.unique("newapp-app3"));
        try (StreamsRunner ignored = runner(third, "instance.id", "seq-it-3", "recovery.tail-guard", "false")) {
            awaitRecords(third, 360);
        }
        Cli.Result unguarded = Cli.run(Cli.concat(new String[] {"verify", "--mode", "sequence"}, third.cli()));
        assertThat(unguarded.exitCode()).isEqualTo(1);
        assertThat(unguarded.lastLine()).isEqualTo("records=360 duplicates=120 missing=0 extra=0");
    }
}
