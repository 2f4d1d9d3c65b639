package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.sequence.SequenceState;
import io.snowstamp.sequence.SequenceStateSerde;
import io.snowstamp.sequence.Tags;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sequence mode under faults: three tags numbered by stamper instances running as child JVMs
 * ({@code run} from the shaded jar) that are SIGKILLed, restarted with and without their local
 * state, stopped cleanly and joined by a third instance (rebalances) while records flow, with a
 * step change in the middle and a trickle of records with an unknown tag.
 *
 * <p>Checked afterwards: {@code verify --mode sequence} finds every input record exactly once in
 * the output or the dead-letter topic and no number twice; in the raw log ({@code read_uncommitted},
 * aborted transactions included) every tag's numbers strictly increase in offset order, with at
 * most one gap per start of the tag's task and every gap smaller than one step.
 *
 * <p>3 x 20,000 records by default; {@code -Dsnowstamp.soak=true} runs 3 x 100,000 with three
 * rounds of faults.
 */
@Tag("integration")
@Timeout(1_800)
class SequenceFaultIT {
    private static final boolean SOAK = Boolean.getBoolean("snowstamp.soak");
    private static final int PER_TAG = SOAK ? 100_000 : 20_000;
    private static final int ROUNDS = SOAK ? 3 : 1;
    /** Producing takes about this long, so that the faults hit a stamper at work. */
    private static final Duration PRODUCE_FOR = Duration.ofSeconds(SOAK ? 150 : 40);
    private static final int UNKNOWN_EVERY = 500;
    private static final int PARTITIONS = 4;
    /** tag -> {start, step}; order's step changes to {@link #NEW_ORDER_STEP} half way. */
    private static final Map<String, long[]> TAGS = new LinkedHashMap<>();
    private static final long NEW_ORDER_STEP = 2_000;
    private static final Pattern TASK_START = Pattern.compile("sequence partition (\\d+): lease epoch");

    static {
        TAGS.put("order", new long[] {1001, 500});
        TAGS.put("invoice", new long[] {1, 1000});
        TAGS.put("ticket", new long[] {500_000, 250});
    }

    private static TestBroker broker;

    @TempDir
    Path work;

    private String in;
    private String out;
    private String dlq;
    private String tagsTopic;
    private String app;
    private final Map<String, ChildJvm> instances = new TreeMap<>();
    private int stateDirs;
    private int kills;
    private final List<String> events = new ArrayList<>();

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start();
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    private String[] settings() {
        return new String[] {"--bootstrap-servers", broker.bootstrapServers(),
                "--set", "id.mode=sequence", "--set", "input.topic=" + in, "--set", "output.topic=" + out,
                "--set", "dlq.topic=" + dlq, "--set", "sequence.tags-topic=" + tagsTopic, "--set", "application.id=" + app};
    }

    /** Starts instance {@code name} with a fresh state directory or the one it had. */
    private void start(String name, boolean freshState) throws Exception {
        Path state = work.resolve("state-" + name + (freshState ? "-" + (++stateDirs) : ""));
        List<String> args = new ArrayList<>(List.of("run", "--state-dir", state.toString(), "--instance-id", name,
                "--set", "sequence.checkpoint-interval=2s", "--shutdown-timeout", "20s"));
        args.addAll(List.of(settings()));
        String kafkaLog = System.getProperty("snowstamp.it.kafka-log");    // e.g. INFO, to see what Kafka Streams does
        ChildJvm jvm = ChildJvm.start(work.resolve("logs"), name, List.of(),
                kafkaLog == null ? List.of() : List.of("-DSNOWSTAMP_LOG_KAFKA_LEVEL=" + kafkaLog), args.toArray(String[]::new));
        instances.put(name, jvm);
        long stampingLines = jvm.stdout().lines().filter(line -> line.startsWith("stamping ")).count();
        awaitLines(jvm, "stamping ", stampingLines);
        events.add("start " + name + (freshState ? " (empty state dir)" : ""));
    }

    /** Waits for one more line starting with {@code prefix} than {@code before} (stdout is appended across restarts). */
    private static void awaitLines(ChildJvm jvm, String prefix, long before) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (jvm.stdout().lines().filter(line -> line.startsWith(prefix)).count() <= before) {
            if (!jvm.isAlive()) {
                throw new AssertionError("instance exited before '" + prefix + "'\n" + jvm.logs());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no '" + prefix + "' within 120 s\n" + jvm.logs());
            }
            Thread.sleep(100);
        }
    }

    private void kill(String name) throws Exception {
        instances.remove(name).kill();
        kills++;
        events.add("SIGKILL " + name);
    }

    private void stop(String name) throws Exception {
        ChildJvm jvm = instances.remove(name);
        int exit = jvm.terminate(60);
        assertThat(exit).as(jvm.logs()).isIn(0, 143);
        events.add("SIGTERM " + name);
    }

    /** One round of faults, spread over the production time. */
    private List<ThrowingRunnable> round(boolean withStepChange) {
        List<ThrowingRunnable> round = new ArrayList<>();
        round.add(() -> {
            kill("a");
            start("a", false);
        });
        if (withStepChange) {
            round.add(() -> {
                Cli.Result step = Cli.run(Cli.concat(new String[] {"tags", "set-step", "order", Long.toString(NEW_ORDER_STEP)}, settings()));
                assertThat(step.exitCode()).as(step.toString()).isZero();
                events.add("tags set-step order " + NEW_ORDER_STEP);
            });
        }
        round.add(() -> {
            kill("b");
            start("b", true);
        });
        round.add(() -> start("c", false));
        round.add(() -> {
            stop("a");
            start("a", false);
        });
        round.add(() -> kill("c"));
        return round;
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void shouldNeverRepeatANumberAcrossKillsRestartsAndRebalances() throws Exception {
        long started = System.nanoTime();
        in = TestBroker.unique("seqf-in");
        out = TestBroker.unique("seqf-out");
        dlq = TestBroker.unique("seqf-dlq");
        tagsTopic = TestBroker.unique("seqf-tags");
        app = TestBroker.unique("seqf-app");
        broker.createTopic(in, PARTITIONS);
        broker.createTopic(out, PARTITIONS);
        broker.createTopic(dlq, 1);
        for (Map.Entry<String, long[]> tag : TAGS.entrySet()) {
            Cli.Result create = Cli.run(Cli.concat(new String[] {"tags", "create", tag.getKey(),
                    "--start", Long.toString(tag.getValue()[0]), "--step", Long.toString(tag.getValue()[1])}, settings()));
            assertThat(create.exitCode()).as(create.toString()).isZero();
        }
        start("a", false);
        start("b", false);

        int total = 3 * PER_TAG + 3 * PER_TAG / UNKNOWN_EVERY;
        AtomicLong produced = new AtomicLong();
        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread producer = new Thread(() -> produce(total, produced, producerFailure), "sequence-fault-producer");
        producer.start();

        List<ThrowingRunnable> faults = new ArrayList<>();
        for (int r = 0; r < ROUNDS; r++) {
            faults.addAll(round(r == ROUNDS / 2));
        }
        long pause = PRODUCE_FOR.toMillis() / (faults.size() + 1);
        for (ThrowingRunnable fault : faults) {
            Thread.sleep(pause);
            fault.run();
            events.add("at " + (System.nanoTime() - started) / 1_000_000_000L + " s: " + produced.get() + " produced, "
                    + count(out) + " stamped");
        }
        producer.join(Duration.ofMinutes(10).toMillis());
        assertThat(producerFailure.get()).isNull();
        assertThat(produced.get()).isEqualTo(total);
        long producedAt = System.nanoTime();

        awaitAccounted(total);
        long doneAt = System.nanoTime();
        for (String name : new ArrayList<>(instances.keySet())) {
            assertThat(instances.get(name).isAlive()).as("instance %s died:\n%s", name, instances.get(name).logs()).isTrue();
            stop(name);
        }

        // ---- committed view: every input record once, no number twice, per tag increasing
        Cli.Result verify = Cli.run(Cli.concat(new String[] {"verify", "--mode", "sequence", "--source", in, "--dlq", dlq}, settings()));
        System.out.println("verify:\n" + verify.out());
        assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=" + 3 * PER_TAG + " duplicates=0 missing=0 extra=0");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        List<ConsumerRecord<byte[], byte[]>> dead = read(dlq, "read_committed");
        assertThat(dead).hasSize(3 * PER_TAG / UNKNOWN_EVERY)
                .allSatisfy(record -> assertThat(header(record, Names.ERROR_HEADER)).isEqualTo("unknown-tag"));

        // ---- raw view: aborted transactions included
        Map<Integer, Integer> starts = taskStarts();
        Map<String, List<Long>> raw = numbersByTag(read(out, "read_uncommitted"));
        StringBuilder report = new StringBuilder();
        for (Map.Entry<String, long[]> tag : TAGS.entrySet()) {
            String name = tag.getKey();
            int partition = Tags.partition(name, PARTITIONS);
            long maxStep = name.equals("order") ? NEW_ORDER_STEP : tag.getValue()[1];
            List<Long> numbers = raw.get(name);
            assertThat(numbers.get(0)).isEqualTo(tag.getValue()[0]);
            long gaps = 0;
            long largest = 0;
            for (int i = 1; i < numbers.size(); i++) {
                long jump = numbers.get(i) - numbers.get(i - 1);
                assertThat(jump).as("tag %s: %d after %d in the raw log", name, numbers.get(i), numbers.get(i - 1)).isPositive();
                if (jump > 1) {
                    gaps++;
                    largest = Math.max(largest, jump - 1);
                    assertThat(jump - 1).as("tag %s skips %d numbers after %d", name, jump - 1, numbers.get(i - 1)).isLessThan(maxStep);
                }
            }
            int taskStarts = starts.getOrDefault(partition, 0);
            assertThat(gaps).as("tag %s: gaps vs starts of task %d", name, partition).isLessThanOrEqualTo(Math.max(0, taskStarts - 1));
            report.append(String.format("tag %s partition %d: %d numbers in the raw log (%d aborted), %d..%d, %d gaps (largest %d"
                            + " skipped) over %d task starts; step %d%n", name, partition, numbers.size(), numbers.size() - PER_TAG,
                    numbers.get(0), numbers.get(numbers.size() - 1), gaps, largest, taskStarts, maxStep));
        }

        copyLogs();
        // ---- the step change: from the segment after it, and never back
        List<SequenceState.TagSegment> orderSegments = orderSegments();
        assertThat(orderSegments).extracting(SequenceState.TagSegment::revision).isSorted().contains(1L, 2L);
        assertThat(orderSegments).filteredOn(s -> s.segmentStart() >= 0).allSatisfy(s ->
                assertThat(s.maxId() - s.segmentStart() + 1).as(s.toString()).isEqualTo(s.revision() == 1 ? 500 : NEW_ORDER_STEP));

        // ---- tags list: max_id covers every number ever written
        Cli.Result list = Cli.run(Cli.concat(new String[] {"tags", "list"}, settings()));
        assertThat(list.exitCode()).as(list.toString()).isZero();
        ObjectMapper json = new ObjectMapper();
        for (String line : list.outLines()) {
            JsonNode tag = json.readTree(line);
            List<Long> numbers = raw.get(tag.get("tag").asText());
            assertThat(tag.get("max_id").asLong()).as(line).isGreaterThanOrEqualTo(numbers.get(numbers.size() - 1));
        }

        System.out.printf("sequence fault test: %d records per tag, %d rounds, %d SIGKILLs; produced in %d s, all accounted %d s"
                        + " later, %d s in all%nevents: %s%ntask starts per partition: %s%n%s%s%n",
                PER_TAG, ROUNDS, kills, (producedAt - started) / 1_000_000_000L, (doneAt - producedAt) / 1_000_000_000L,
                (System.nanoTime() - started) / 1_000_000_000L, events, starts, report, list.out());
    }

    /** Keeps the instances' logs in target/ for a look after the run. */
    private void copyLogs() throws Exception {
        Path target = Path.of("target", "sequence-fault-logs");
        Files.createDirectories(target);
        try (var files = Files.list(work.resolve("logs"))) {
            for (Path file : files.toList()) {
                Files.copy(file, target.resolve(file.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** Produces {@code total} records at an even pace over {@link #PRODUCE_FOR}: the tags in turn, an unknown one now and then. */
    private void produce(int total, AtomicLong produced, AtomicReference<Throwable> failure) {
        String[] tags = TAGS.keySet().toArray(String[]::new);
        long begin = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            int known = 0;
            for (int n = 0; n < total; n++) {
                String tag = (n + 1) % (UNKNOWN_EVERY + 1) == 0 ? "nope" : tags[known++ % tags.length];
                producer.send(new ProducerRecord<>(in, tag.getBytes(StandardCharsets.UTF_8),
                        ("{\"n\":" + n + ",\"tag\":\"" + tag + "\"}").getBytes(StandardCharsets.UTF_8)));
                produced.incrementAndGet();
                if (n % 500 == 499) {
                    long due = begin + PRODUCE_FOR.toNanos() * (n + 1) / total;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000);
                    }
                }
            }
            producer.flush();
        } catch (Throwable e) {
            failure.set(e);
        }
    }

    /** Waits until output and dead letters hold every input record (read_committed), bounded. */
    private void awaitAccounted(int total) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(SOAK ? 900 : 240).toNanos();
        long seen = 0;
        while (System.nanoTime() < deadline) {
            seen = count(out) + count(dlq);
            if (seen >= total) {
                copyLogs();
                return;
            }
            Thread.sleep(2_000);
        }
        StringBuilder logs = new StringBuilder();
        for (ChildJvm jvm : instances.values()) {
            logs.append(jvm.logs());
        }
        throw new AssertionError("only " + seen + " of " + total + " records accounted for after the deadline\n" + logs);
    }

    private static long count(String topic) {
        AtomicLong count = new AtomicLong();
        TopicReader.readToEnd(consumerProps("read_committed"), topic, Duration.ofSeconds(60), record -> count.incrementAndGet());
        return count.get();
    }

    private static Properties consumerProps(String isolation) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return props;
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(String topic, String isolation) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        TopicReader.readToEnd(consumerProps(isolation), topic, Duration.ofSeconds(120), records::add);
        return records;
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** Per tag, its numbers in offset order (a tag lives in one partition). */
    private static Map<String, List<Long>> numbersByTag(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<String, List<Long>> numbers = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            numbers.computeIfAbsent(header(record, SequenceNames.TAG_HEADER), ignored -> new ArrayList<>())
                    .add(Long.parseLong(header(record, Names.ID_HEADER)));
        }
        return numbers;
    }

    /** Per partition, how often a sequence task started (INFO line of each task start, all instances). */
    private Map<Integer, Integer> taskStarts() throws Exception {
        Map<Integer, Integer> starts = new TreeMap<>();
        try (var files = Files.list(work.resolve("logs"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".err")).toList()) {
                Matcher matcher = TASK_START.matcher(Files.readString(file));
                while (matcher.find()) {
                    starts.merge(Integer.parseInt(matcher.group(1)), 1, Integer::sum);
                }
            }
        }
        return starts;
    }

    /** The segments of tag order in changelog order. */
    private List<SequenceState.TagSegment> orderSegments() {
        SequenceStateSerde serde = new SequenceStateSerde();
        List<SequenceState.TagSegment> segments = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : read(SequenceNames.changelogTopic(app), "read_committed")) {
            if ("order".equals(new String(record.key(), StandardCharsets.UTF_8))) {
                segments.add((SequenceState.TagSegment) serde.deserialize(null, record.value()));
            }
        }
        return segments;
    }
}
