package io.snowstamp.it;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Garbage through a real broker: every input record ends in exactly one of the output and the
 * dead-letter topic, the stamper never stops, and valid records are stamped normally.
 */
@Tag("integration")
@Timeout(420)
class HostileInputIT extends OnSharedBroker {
    private static final int HOSTILE = 10_000;
    private static final int VALID = 5_000;
    private static final int LIMIT = 60_000;        // the stamper's max.request.size
    private static final String NESTED_DUPLICATE = "{\"nested\":{\"b\":1,\"b\":[{\"c\":2,\"c\":3}]}}";
    @TempDir
    Path work;

    /** A hostile value and the dead-letter code JSON mode must give it (null: valid, stamped). */
    private record Case(byte[] value, String code) {
        boolean valid() {
            return value != null && new String(value, StandardCharsets.UTF_8).startsWith("{\"valid\":");
        }
    }

    private static Case hostile(SplittableRandom random, int n) {
        String deep = "[".repeat(80) + "]".repeat(80);
        return switch (n % 16) {
            case 0 -> new Case(randomBytes(random, 1 + random.nextInt(200)), null);      // judged below
            case 1 -> new Case(bytes("{\"a\":1,\"b\":[1,2"), "truncated");
            case 2 -> new Case(bytes("[1,2,3]"), "not-object");
            case 3 -> new Case(bytes("\"just a string\""), "not-object");
            case 4 -> new Case(bytes(String.valueOf(random.nextLong())), "not-object");
            case 5 -> new Case(bytes("null"), "not-object");
            case 6 -> new Case(bytes("{\"id\":42,\"x\":" + n + "}"), "field-exists");
            case 7 -> new Case(new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xc3, (byte) 0x28, '"', '}'}, "invalid-utf8");
            case 8 -> new Case(bytes("{\"a\":1,\"a\":2}"), "duplicate-key");
            case 9 -> new Case(bytes("{\"deep\":" + deep + "}"), "too-deep");
            case 10 -> new Case(bytes("{\"a\":1} {\"b\":2}"), "trailing-content");
            case 11 -> new Case(bytes("{\"pad\":\"" + "x".repeat(LIMIT - 900) + "\"}"), "too-large");
            case 12 -> new Case(bytes("{\"a\":1,}"), "not-json");
            case 13 -> new Case(bytes(NESTED_DUPLICATE), null);                       // legal syntax: stamped
            case 14 -> new Case(new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"', '}'},
                    "invalid-utf8");                                                    // a surrogate, shaped like UTF-8
            default -> new Case(null, "not-object");                                   // a tombstone
        };
    }

    private static byte[] randomBytes(SplittableRandom random, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
        bytes[0] = (byte) '{';          // most garbage should at least start like an object
        return bytes;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private Map<String, String> settings(String in, String out, String dlq, String... more) {
        Map<String, String> settings = new HashMap<>(Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "state.dir", work.resolve("state").toString(), "instance.id", "hostile",
                "application.id", TestBroker.unique("hostile-app"),
                "input.topic", in, "output.topic", out, "dlq.topic", dlq,
                "id.worker-registry", "off"));     // several applications with the default offset on one broker
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    @Test
    void shouldRouteEveryHostileRecordToTheDeadLetterTopicAndStampTheRest() throws Exception {
        String in = TestBroker.unique("hostile-in");
        String out = TestBroker.unique("hostile-out");
        String dlq = TestBroker.unique("hostile-dlq");
        broker.createTopic(in, 3);
        broker.createTopic(out, 3);
        broker.createTopic(dlq, 1);
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), settings(in, out, dlq,
                "stamp.json-field", "id", "kafka.max.request.size", String.valueOf(LIMIT)));

        SplittableRandom random = new SplittableRandom(20261121);
        Map<String, String> expectedCodes = new TreeMap<>();     // key -> the code its record must carry
        Set<String> garbage = new HashSet<>();                   // keys of random bytes: stamped or dead, either way once
        int valid = 0;
        int nestedSent = 0;
        try (StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(120))).isTrue();
            for (int n = 0; n < HOSTILE + VALID; n++) {
                Case c = n % 3 == 2 ? new Case(bytes("{\"valid\":" + n + "}"), null) : hostile(random, n);
                producer.send(new ProducerRecord<>(in, bytes("k" + n), c.value()));
                if (c.code() != null) {
                    expectedCodes.put("k" + n, c.code());
                } else if (n % 16 == 0 && n % 3 != 2) {
                    garbage.add("k" + n);
                } else if (c.valid()) {
                    valid++;
                } else if (Arrays.equals(c.value(), bytes(NESTED_DUPLICATE))) {
                    nestedSent++;
                }
            }
            producer.flush();

            Cli.Result verify = awaitAccounted(in, out, dlq, HOSTILE + VALID);
            assertThat(verify.lastLine()).as(verify.toString()).endsWith(" duplicates=0 missing=0 extra=0");
            assertThat(verify.exitCode()).isZero();
            assertThat(runner.state()).isEqualTo(KafkaStreams.State.RUNNING);
        }

        List<ConsumerRecord<byte[], byte[]>> dead = broker.consume(dlq, Integer.MAX_VALUE, Duration.ofSeconds(5));
        Map<String, String> deadCodes = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> record : dead) {
            String key = new String(record.key(), StandardCharsets.UTF_8);
            String code = new String(record.headers().lastHeader(IdHeader.ERROR).value(), StandardCharsets.UTF_8);
            assertThat(deadCodes.put(key, code)).as("record %s in the dead-letter topic twice", key).isNull();
        }
        // exactly one dead letter per bad record, with its code; random garbage lands in some code of its own
        Map<String, String> deliberate = new TreeMap<>(deadCodes);
        deliberate.keySet().removeAll(garbage);
        assertThat(deliberate).isEqualTo(expectedCodes);
        assertThat(new TreeSet<>(expectedCodes.values())).containsExactly("duplicate-key", "field-exists", "invalid-utf8",
                "not-json", "not-object", "too-deep", "too-large", "trailing-content", "truncated");

        List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(out, Integer.MAX_VALUE, Duration.ofSeconds(10));
        assertThat(stamped).as("every record not dead, stamped once").hasSize(HOSTILE + VALID - dead.size());
        long validStamped = stamped.stream().filter(r -> new String(r.value(), StandardCharsets.UTF_8).matches(
                "\\{\"id\":[0-9]+,\"valid\":[0-9]+}")).count();
        assertThat(validStamped).isEqualTo(valid);
        long nestedDuplicates = stamped.stream().filter(r -> new String(r.value(), StandardCharsets.UTF_8).equals(
                "{\"id\":" + new String(r.headers().lastHeader(IdHeader.ID).value(), StandardCharsets.UTF_8) + "," + NESTED_DUPLICATE.substring(1))).count();
        assertThat(nestedSent).isPositive();
        assertThat(nestedDuplicates).as("values with a name twice below the top level, stamped byte for byte").isEqualTo(nestedSent);
    }

    @Test
    void shouldStampEverythingInHeaderMode() throws Exception {
        String in = TestBroker.unique("header-in");
        String out = TestBroker.unique("header-out");
        String dlq = TestBroker.unique("header-dlq");
        broker.createTopic(in, 2);
        broker.createTopic(out, 2);
        broker.createTopic(dlq, 1);
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), settings(in, out, dlq));
        SplittableRandom random = new SplittableRandom(7);
        int count = 2_000;
        try (StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(120))).isTrue();
            for (int n = 0; n < count; n++) {
                producer.send(new ProducerRecord<>(in, bytes("k" + n), hostile(random, n).value()));
            }
            producer.flush();
            Cli.Result verify = awaitAccounted(in, out, dlq, count);
            assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=" + count + " duplicates=0 missing=0 extra=0");
        }
        assertThat(broker.consume(dlq, 1, Duration.ofSeconds(2))).isEmpty();
    }

    @Test
    void shouldStopRatherThanDropARecordThatCannotBeWrittenEvenToTheDeadLetterTopic() throws Exception {
        String in = TestBroker.unique("huge-in");
        String out = TestBroker.unique("huge-out");
        String dlq = TestBroker.unique("huge-dlq");
        broker.createTopic(in, 1);
        broker.createTopic(out, 1);
        broker.createTopic(dlq, 1);
        Map<String, String> settings = settings(in, out, dlq, "stamp.json-field", "id", "kafka.max.request.size", "20000");
        byte[] huge = bytes("{\"pad\":\"" + "x".repeat(30_000) + "\"}");
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            producer.send(new ProducerRecord<>(in, bytes("ok-1"), bytes("{\"a\":1}")));
            producer.send(new ProducerRecord<>(in, bytes("huge"), huge));
            producer.send(new ProducerRecord<>(in, bytes("ok-2"), bytes("{\"a\":2}")));
        }
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
            runner.start();
            Throwable failure = catchThrowable(runner::awaitTermination);
            assertThat(failure).isInstanceOf(SnowstampException.class);
            // one line for a person: what was too large and the limit, no Java class name
            assertThat(failure.getMessage()).contains("larger than 20000", "max.request.size").doesNotContain("Exception");
        }
        // nothing was dropped: with room for it, the same application stamps all three
        settings.put("kafka.max.request.size", "100000");
        settings.put("stamp.json-field", "id");
        try (StreamsRunner runner = new StreamsRunner(ConfigLoader.load(null, Map.of(), settings), System::currentTimeMillis)) {
            runner.start();
            Cli.Result verify = awaitAccounted(in, out, dlq, 3);
            assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=3 duplicates=0 missing=0 extra=0");
        }
        assertThat(broker.consume(dlq, 1, Duration.ofSeconds(2))).isEmpty();
    }

    /** Runs verify with --dlq until every source record is accounted for (or the deadline passes). */
    private Cli.Result awaitAccounted(String in, String out, String dlq, int total) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        Cli.Result verify;
        do {
            verify = Cli.run("verify", "--bootstrap-servers", broker.bootstrapServers(), "--topic", out, "--source", in,
                    "--dlq", dlq);
            if (verify.exitCode() == 0 && verify.out().contains("missing=0")) {
                return verify;
            }
            Thread.sleep(1_000);
        } while (System.nanoTime() < deadline);
        return verify;
    }
}
