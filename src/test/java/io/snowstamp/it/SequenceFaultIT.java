package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.sequence.SequenceNames;
import io.snowstamp.sequence.SequenceState;
import io.snowstamp.sequence.SequenceStateSerde;
import io.snowstamp.sequence.Tags;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sequence mode under faults: three tags numbered by stamper instances running as child JVMs
 * ({@code run} from the shaded jar) that are SIGKILLed, restarted on their own state, replaced by
 * an instance with an empty state directory, stopped cleanly and joined by a third instance
 * (rebalances) while records flow, with a step change in the middle and a trickle of records with
 * an unknown tag. Each fault waits until the output grows again, so the next one hits a stamper at
 * work.
 *
 * <p>Run under both processing guarantees. Checked afterwards: {@code verify --mode sequence} finds
 * every input record in the output or the dead-letter topic and no number twice (exactly-once: every
 * record exactly once; at-least-once: records stamped again after a kill are extra); every tag's
 * numbers strictly increase in offset order. Gaps come only from the SIGKILLs, at most one per SIGKILL
 * that hit the tag's task (a clean stop and the rebalances add none):
 * <ul>
 *   <li>exactly-once: in the raw log ({@code read_uncommitted}, aborted transactions included) none at
 *       all — every start resumes right after the last number in the log, and a number that reached
 *       the log is issued again by nobody; in the committed view ({@code read_committed}) only numbers
 *       of aborted transactions are missing. Such a gap is what the tag received in one commit
 *       interval, which can be more than a step (a task catching up after a kill: 540 numbers of
 *       order, step 500, in one aborted transaction);
 *   <li>at-least-once: after a kill the next owner resumes above the tag's reserved segment (a record
 *       of the killed holder could still be on its way); after a clean stop or a rebalance the
 *       holder's clean-close marker lets it continue right after the last number.
 * </ul>
 * No upper bound is asserted on a gap. The step change applies from a segment boundary;
 * {@code tags list} shows a max_id above every number written.
 *
 * <p>Records flow from before the first fault until after the last one (the producer stops only
 * then, so every fault hits a stamper at work however slow the machine), a round of faults by
 * default; {@code -Dsnowstamp.soak=true} runs three rounds, slower.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of fault rounds through child JVMs (development.md)
@Order(2)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(1_800)
class SequenceFaultIT extends OnSharedBroker {
    private static final boolean SOAK = Boolean.getBoolean("snowstamp.soak");
    private static final int ROUNDS = SOAK ? 3 : 1;
    /** Records a second, from the start until the faults are over. */
    private static final int RATE = SOAK ? 1_500 : 3_000;
    private static final int UNKNOWN_EVERY = 500;
    private static final int PARTITIONS = 4;
    /** tag -> {start, step}; order's step changes to {@link #NEW_ORDER_STEP} in the middle round. */
    private static final Map<String, long[]> TAGS = new LinkedHashMap<>();
    private static final long NEW_ORDER_STEP = 2_000;
    private static final Pattern TASK_START = Pattern.compile("sequence partition (\\d+): lease epoch");
    /** A task start or a task close, in one instance's log. */
    private static final Pattern TASK_EVENT = Pattern.compile("sequence partition (\\d+): (lease epoch|task closed)");

    static {
        TAGS.put("order", new long[] {1001, 500});
        TAGS.put("invoice", new long[] {1, 1000});
        TAGS.put("ticket", new long[] {500_000, 250});
    }

    @TempDir
    Path work;

    private Stamper.Topics topics;
    private String tagsTopic;
    private Stamper base;
    private Timeline timeline;
    private final List<ChildJvm> started = new ArrayList<>();
    private int kills;
    /** Per partition, the SIGKILLs that hit an instance holding its task. */
    private final Map<Integer, Integer> hits = new TreeMap<>();
    private int freshStates;
    /** Set after the last fault: the producer then stops once every tag has as many records. */
    private final AtomicBoolean faultsOver = new AtomicBoolean();
    /** What the producer wrote in all, and per tag (known once it stopped). */
    private long total;
    private long perTag;
    private boolean exactlyOnce;

    /** CLI arguments that reach this test's topics and application. */
    private String[] cliSettings() {
        return new String[] {"--bootstrap-servers", broker.bootstrapServers(),
                "--set", "id.mode=sequence", "--set", "input.topic=" + topics.in(), "--set", "output.topic=" + topics.out(),
                "--set", "dlq.topic=" + topics.dlq(), "--set", "sequence.tags-topic=" + tagsTopic,
                "--set", "application.id=" + base.applicationId()};
    }

    @ParameterizedTest
    @ValueSource(strings = {"exactly_once_v2", "at_least_once"})
    void shouldNeverRepeatANumberAcrossKillsRestartsAndRebalances(String guarantee) throws Exception {
        exactlyOnce = guarantee.equals("exactly_once_v2");
        long began = System.nanoTime();
        timeline = new Timeline("sequence-fault-" + guarantee);
        topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        tagsTopic = TestBroker.unique("seqf-tags");
        base = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("seqf-app"), topics, "a")
                .with("id.mode", "sequence")
                .with("sequence.tags-topic", tagsTopic)
                .with("sequence.checkpoint-interval", "2s")
                .with("processing.guarantee", guarantee);
        for (Map.Entry<String, long[]> tag : TAGS.entrySet()) {
            Cli.Result create = Cli.run(Cli.concat(new String[] {"tags", "create", tag.getKey(),
                    "--start", Long.toString(tag.getValue()[0]), "--step", Long.toString(tag.getValue()[1])}, cliSettings()));
            assertThat(create.exitCode()).as(create.toString()).isZero();
        }
        AtomicLong produced = new AtomicLong();
        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread producer = new Thread(() -> produce(produced, producerFailure), "sequence-fault-producer");
        Map<String, ChildJvm> running = new TreeMap<>();
        try (TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            producer.start();
            running.put("a", joined(base, ends, produced));
            running.put("b", joined(base.instance("b"), ends, produced));
            for (int round = 0; round < ROUNDS; round++) {
                faultRound(round, running, ends, produced);
            }
            faultsOver.set(true);
            producer.join(Duration.ofMinutes(1).toMillis());
            assertThat(producer.isAlive()).as("the producer stops after the faults").isFalse();
            assertThat(producerFailure.get()).isNull();
            total = produced.get();
            perTag = (total - total / (UNKNOWN_EVERY + 1)) / TAGS.size();
            long producedAt = System.nanoTime();
            timeline.mark("produced %d records (%d per tag, %d with an unknown tag)", total, perTag, total - 3 * perTag);

            awaitAccounted(total);
            timeline.mark("all accounted for, %d s after the last record was produced", (System.nanoTime() - producedAt) / 1_000_000_000L);
            for (Map.Entry<String, ChildJvm> instance : running.entrySet()) {
                assertThat(instance.getValue().isAlive()).as("instance %s died:\n%s", instance.getKey(), instance.getValue().logs()).isTrue();
                assertThat(instance.getValue().terminate(60)).as(instance.getValue().logs()).isIn(0, 143);
            }
        } finally {
            producer.interrupt();
            for (ChildJvm child : started) {
                child.close();
            }
        }
        check(began);
    }

    /** One round of faults; each waits for the output to grow again (or for the last records) before the next. */
    private void faultRound(int round, Map<String, ChildJvm> running, TopicEnds ends, AtomicLong produced) throws Exception {
        kill(running.remove("a"));
        progress(ends, produced, "a killed");
        running.put("a", rejoined(base, ends, produced));

        if (round == ROUNDS / 2) {
            Cli.Result step = Cli.run(Cli.concat(new String[] {"tags", "set-step", "order", Long.toString(NEW_ORDER_STEP)}, cliSettings()));
            assertThat(step.exitCode()).as(step.toString()).isZero();
            progress(ends, produced, "tags set-step order " + NEW_ORDER_STEP);
        }

        kill(running.remove("b"));
        progress(ends, produced, "b killed");
        // b comes back as a new machine would: same application, empty state directory
        running.put("b", joined(base.instance("b-fresh-" + (++freshStates)), ends, produced));

        running.put("c", joined(base.instance("c"), ends, produced));
        ChildJvm a = running.remove("a");
        assertThat(a.terminate(60)).as(a.logs()).isIn(0, 143);
        progress(ends, produced, "a stopped (SIGTERM)");
        running.put("a", joined(base, ends, produced));

        kill(running.remove("c"));
        progress(ends, produced, "c killed");
    }

    /** SIGKILLs an instance and notes the partitions whose tasks it held: its log's last word on each is a start. */
    private void kill(ChildJvm instance) throws Exception {
        instance.kill();
        kills++;
        Map<Integer, Boolean> held = new TreeMap<>();
        Matcher matcher = TASK_EVENT.matcher(instance.stderr());
        while (matcher.find()) {
            held.put(Integer.parseInt(matcher.group(1)), matcher.group(2).startsWith("lease"));
        }
        held.forEach((partition, holding) -> {
            if (holding) {
                hits.merge(partition, 1, Integer::sum);
            }
        });
    }

    private ChildJvm joined(Stamper stamper, TopicEnds ends, AtomicLong produced) throws Exception {
        ChildJvm child = stamper.start();
        started.add(child);
        return tookPartitions(stamper, child, ends, produced);
    }

    private ChildJvm rejoined(Stamper stamper, TopicEnds ends, AtomicLong produced) throws Exception {
        ChildJvm child = stamper.restartAfterCrash(refusal -> timeline.mark("restart refused, local state deleted: %s", refusal));
        started.add(child);
        return tookPartitions(stamper, child, ends, produced);
    }

    private ChildJvm tookPartitions(Stamper stamper, ChildJvm child, TopicEnds ends, AtomicLong produced) throws Exception {
        child.awaitLog("taken by " + stamper.instanceId() + "#", 180);
        progress(ends, produced, stamper.instanceId() + " took partitions");
        return child;
    }

    /**
     * Waits until the output grows by a few hundred records (the producer runs until the faults are over).
     * The bound is minutes: the test classes run side by side, and a stamper's first records after a
     * start can take long on a loaded machine; a stamper that stopped stamping still fails here.
     */
    private void progress(TopicEnds ends, AtomicLong produced, String after) throws Exception {
        long before = ends.total(topics.out());
        long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
        while (ends.total(topics.out()) <= before + 300) {
            assertThat(System.nanoTime()).as("output grows after: %s", after).isLessThan(deadline);
            Thread.sleep(100);
        }
        timeline.mark("%s; output at %d, %d produced", after, ends.total(topics.out()), produced.get());
    }

    /** The checks once every record is accounted for. */
    private void check(long began) throws Exception {
        // ---- committed view: every input record once, no number twice, per tag increasing
        Cli.Result verify = verify();
        timeline.mark("verify --mode sequence:%n%s", verify.out());
        List<ConsumerRecord<byte[], byte[]>> dead = read(topics.dlq(), "read_committed");
        assertThat(dead).allSatisfy(record -> assertThat(header(record, IdHeader.ERROR)).isEqualTo("unknown-tag"));
        if (exactlyOnce) {
            assertThat(verify.lastLine()).as(verify.toString()).isEqualTo("records=" + 3 * perTag + " duplicates=0 missing=0 extra=0");
            assertThat(verify.exitCode()).as(verify.toString()).isZero();
            assertThat(dead).hasSize((int) (total - 3 * perTag));
        } else {
            assertThat(verify.lastLine()).as(verify.toString()).matches("records=\\d+ duplicates=0 missing=0 extra=\\d+");
            assertThat(dead.stream().map(record -> new String(record.value(), StandardCharsets.UTF_8)).distinct().count())
                    .as("every record with an unknown tag dead-lettered, some twice").isEqualTo(total - 3 * perTag);
        }

        // ---- gaps, per tag: none in the raw view (aborted transactions included); in the committed view, aborted numbers only
        Map<Integer, Integer> starts = taskStarts();
        Map<String, List<Long>> raw = numbersByTag(read(topics.out(), "read_uncommitted"));
        Map<String, List<Long>> committed = numbersByTag(read(topics.out(), "read_committed"));
        StringBuilder report = new StringBuilder();
        for (Map.Entry<String, long[]> tag : TAGS.entrySet()) {
            String name = tag.getKey();
            int partition = Tags.partition(name, PARTITIONS);
            long start = tag.getValue()[0];
            long maxStep = name.equals("order") ? NEW_ORDER_STEP : tag.getValue()[1];
            int hit = hits.getOrDefault(partition, 0);
            List<Long> rawNumbers = raw.get(name);
            Gaps rawGaps = Gaps.of(name + " (raw log)", start, rawNumbers);
            Gaps committedGaps = Gaps.of(name + " (committed)", start, committed.get(name));
            assertThat(committedGaps.count()).as("tag %s: gaps in the committed view vs %d SIGKILLs that hit task %d: %s",
                    name, hit, partition, committedGaps).isLessThanOrEqualTo(hit);
            if (exactlyOnce) {
                assertThat(rawGaps.count()).as("tag %s: gaps in the raw log, where every start continues after the last number: %s",
                        name, rawGaps).isZero();
                java.util.Set<Long> written = new java.util.HashSet<>(rawNumbers);
                for (long number : committedGaps.missing()) {
                    assertThat(written).as("tag %s: %d is missing in the committed view, and not in an aborted transaction", name, number)
                            .contains(number);
                }
            }
            report.append(String.format("tag %s partition %d: %d numbers in the raw log (%d beyond one per record), %d..%d,"
                            + " %d gaps; committed view: %d gaps (%d numbers, largest %d); %d SIGKILLs hit the task, %d task starts;"
                            + " largest step %d%n", name, partition, rawNumbers.size(), rawNumbers.size() - perTag, rawNumbers.get(0),
                    rawNumbers.get(rawNumbers.size() - 1), rawGaps.count(), committedGaps.count(), committedGaps.missing().size(),
                    committedGaps.largest(), hit, starts.getOrDefault(partition, 0), maxStep));
        }

        // ---- the step change: from a segment boundary, and never back
        List<SequenceState.TagSegment> orderSegments = orderSegments();
        assertThat(orderSegments).extracting(SequenceState.TagSegment::revision).isSorted().contains(2L);
        assertThat(orderSegments).filteredOn(s -> s.segmentStart() >= 0).allSatisfy(s ->
                assertThat(s.maxId() - s.segmentStart() + 1).as(s.toString()).isEqualTo(s.revision() == 1 ? 500 : NEW_ORDER_STEP));

        // ---- tags list: max_id covers every number ever written
        Cli.Result list = Cli.run(Cli.concat(new String[] {"tags", "list"}, cliSettings()));
        assertThat(list.exitCode()).as(list.toString()).isZero();
        ObjectMapper json = new ObjectMapper();
        for (String line : list.outLines()) {
            JsonNode tag = json.readTree(line);
            List<Long> numbers = raw.get(tag.get("tag").asText());
            assertThat(tag.get("max_id").asLong()).as(line).isGreaterThanOrEqualTo(numbers.get(numbers.size() - 1));
        }
        timeline.mark("%d records per tag, %d round(s), %d SIGKILLs (per partition hit: %s), %d s in all; task starts per partition %s%n"
                        + "%stags list:%n%s", perTag, ROUNDS, kills, hits, (System.nanoTime() - began) / 1_000_000_000L, starts, report,
                list.out());
    }

    /**
     * The gaps of one tag's numbers (strictly increasing, asserted here), counting one before the first
     * number if it is not the tag's start.
     *
     * @param missing every number skipped, in order
     */
    private record Gaps(String what, long count, long largest, List<Long> missing) {
        static Gaps of(String what, long start, List<Long> numbers) {
            long count = 0;
            long largest = 0;
            List<Long> missing = new ArrayList<>();
            long previous = start - 1;
            for (long number : numbers) {
                assertThat(number).as("%s: %d after %d", what, number, previous).isGreaterThan(previous);
                if (number > previous + 1) {
                    count++;
                    largest = Math.max(largest, number - previous - 1);
                    for (long skipped = previous + 1; skipped < number; skipped++) {
                        missing.add(skipped);
                    }
                }
                previous = number;
            }
            return new Gaps(what, count, largest, missing);
        }

        @Override
        public String toString() {
            return count + " gaps, " + missing.size() + " numbers, largest " + largest
                    + (missing.isEmpty() ? "" : ", first missing " + missing.subList(0, Math.min(10, missing.size())));
        }
    }

    /**
     * Produces at {@link #RATE} records a second, the tags in turn and an unknown one now and then, until
     * the faults are over and every tag has as many records.
     */
    private void produce(AtomicLong produced, AtomicReference<Throwable> failure) {
        String[] tags = TAGS.keySet().toArray(String[]::new);
        long begin = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            int known = 0;
            for (int n = 0; !(faultsOver.get() && known % tags.length == 0); n++) {
                String tag = (n + 1) % (UNKNOWN_EVERY + 1) == 0 ? "nope" : tags[known++ % tags.length];
                producer.send(new ProducerRecord<>(topics.in(), tag.getBytes(StandardCharsets.UTF_8),
                        ("{\"n\":" + n + ",\"tag\":\"" + tag + "\"}").getBytes(StandardCharsets.UTF_8)));
                produced.incrementAndGet();
                if (n % 100 == 99) {
                    long wait = begin + 1_000_000_000L * (n + 1) / RATE - System.nanoTime();
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
    private void awaitAccounted(long total) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(SOAK ? 900 : 240).toNanos();
        long seen = 0;
        while (System.nanoTime() < deadline) {
            seen = count(topics.out()) + count(topics.dlq());
            // at-least-once: records stamped twice after a kill count too, so it also takes verify to find none missing
            if (seen >= total && (exactlyOnce || verify().lastLine().contains(" missing=0 "))) {
                return;
            }
            Thread.sleep(2_000);
        }
        throw new AssertionError("only " + seen + " of " + total + " records accounted for after the deadline; logs in "
                + base.logDir());
    }

    private Cli.Result verify() throws Exception {
        return Cli.run(Cli.concat(new String[] {"verify", "--mode", "sequence", "--source", topics.in(), "--dlq", topics.dlq()},
                cliSettings()));
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
            numbers.computeIfAbsent(header(record, IdHeader.TAG), ignored -> new ArrayList<>())
                    .add(Long.parseLong(header(record, IdHeader.ID)));
        }
        return numbers;
    }

    /** Per partition, how often a sequence task started (INFO line of each task start, all instances). */
    private Map<Integer, Integer> taskStarts() throws Exception {
        Map<Integer, Integer> starts = new TreeMap<>();
        try (var files = Files.list(base.logDir())) {
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
        for (ConsumerRecord<byte[], byte[]> record : read(SequenceNames.changelogTopic(base.applicationId()), "read_committed")) {
            if ("order".equals(new String(record.key(), StandardCharsets.UTF_8))) {
                segments.add((SequenceState.TagSegment) serde.deserialize(null, record.value()));
            }
        }
        return segments;
    }
}
