package io.snowstamp.it;

import io.snowstamp.recovery.TopicReader;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sequence mode under at-least-once, where no transaction fences an old owner: its number reaches the output after a
 * new owner took the tag. Instance a stops itself (SIGSTOP, {@code -Dsnowstamp.test.freeze-at-record}) after it took a
 * number and before its record is forwarded — as a record in a producer retry, or behind a slow follower, would be
 * late. While it is frozen, its partition moves to b, which reads the output tail (the number is not there), waits out
 * a's lease and numbers the tag steadily. Then a resumes and its record lands. Checked: no number twice per tag, and
 * the late number did land behind higher numbers of its tag (the takeover happened while it was on its way).
 */
@Tag("integration")
@Tag("full")   // -Pfull only: a frozen child JVM waits out the session timeout
@Timeout(600)
class SequenceLateWriteIT extends OnSharedBroker {
    private static final int PARTITIONS = 2;
    private static final int RATE = 400;
    /** Tags spread over both output partitions (asserted): whichever partition a holds when it freezes has tags. */
    private static final List<String> TAGS = List.of("order", "invoice", "ticket", "refund", "payout", "shipment");
    private static final Pattern FROZEN_AT = Pattern.compile("after number (\\d+) of tag (\\S+) \\(partition");
    /** Tags first produced once a holds a partition (asserted to spread over both): each opens a segment there. */
    private static final List<String> FRESH = List.of("return", "credit", "voucher", "parcel", "claim", "quote");
    private static final Pattern FROZEN_AT_SEGMENT = Pattern.compile("after the segment from number (\\d+) of tag (\\S+) \\(partition");

    @TempDir
    Path work;

    private final List<ChildJvm> started = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    /** The tags the producer sends in turn. */
    private volatile List<String> producing = TAGS;

    @AfterEach
    void stopInstances() throws Exception {
        stop.set(true);
        for (ChildJvm child : started) {
            child.close();
        }
    }

    /** b, at-least-once, with {@link #TAGS} and {@link #FRESH} created in segments far larger than the run. */
    private Stamper stamperWithTags(Stamper.Topics topics) throws Exception {
        assertThat(TAGS.stream().map(tag -> Tags.partition(tag, PARTITIONS)).distinct()).hasSize(PARTITIONS);
        assertThat(FRESH.stream().map(tag -> Tags.partition(tag, PARTITIONS)).distinct()).hasSize(PARTITIONS);
        String tagsTopic = TestBroker.unique("seql-tags");
        Stamper base = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("seql-app"), topics, "b")
                .with("id.mode", "sequence")
                .with("sequence.tags-topic", tagsTopic)
                .with("processing.guarantee", "at_least_once")
                .with("kafka.commit.interval.ms", "1000");
        String[] cli = {"--bootstrap-servers", broker.bootstrapServers(), "--set", "id.mode=sequence",
                "--set", "input.topic=" + topics.in(), "--set", "output.topic=" + topics.out(), "--set", "dlq.topic=" + topics.dlq(),
                "--set", "sequence.tags-topic=" + tagsTopic, "--set", "application.id=" + base.applicationId()};
        for (String tag : java.util.stream.Stream.concat(TAGS.stream(), FRESH.stream()).toList()) {
            Cli.Result create = Cli.run(Cli.concat(new String[] {"tags", "create", tag, "--start", "1", "--step", "1000000"}, cli));
            assertThat(create.exitCode()).as(create.toString()).isZero();
        }
        return base;
    }

    @Test
    void shouldNeverIssueANumberAgainThatTheOldOwnerSendsAfterTheTakeover() throws Exception {
        Timeline timeline = new Timeline("sequence-late-write");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        // the frozen number is inside a segment reserved long before
        Stamper base = stamperWithTags(topics);
        AtomicLong produced = new AtomicLong();
        Thread producer = new Thread(() -> produce(topics.in(), produced), "sequence-late-write-producer");
        try (TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            producer.start();
            ChildJvm b = start(base);
            Map<Integer, Long> before = ends.committedPerPartition(topics.out());
            assertThat(ends.awaitEveryPartitionGrown(topics.out(), before, 50, Duration.ofSeconds(120))).as("b stamps").isTrue();
            timeline.mark("b stamping alone");

            ChildJvm a = start(base.instance("a").withJvmArg("-Dsnowstamp.test.freeze-at-record=" + RATE * 2));
            a.awaitFrozen(180);
            Matcher frozenAt = FROZEN_AT.matcher(a.stderr());
            assertThat(frozenAt.find()).as(a.stderr()).isTrue();
            long lateNumber = Long.parseLong(frozenAt.group(1));
            String lateTag = frozenAt.group(2);
            timeline.mark("a stopped itself after taking number %d of tag %s", lateNumber, lateTag);

            before = ends.committedPerPartition(topics.out());
            assertThat(ends.awaitEveryPartitionGrown(topics.out(), before, 2 * RATE, Duration.ofSeconds(120)))
                    .as("a's partition moved to b, which numbers it steadily").isTrue();
            timeline.mark("every partition stamps again while a is frozen");
            a.thaw();
            a.awaitLog("resumed (SIGCONT)", 30);
            timeline.mark("a resumed (SIGCONT)");
            Thread.sleep(5_000);

            stop.set(true);
            producer.join(Duration.ofSeconds(30).toMillis());
            long total = produced.get();
            awaitStable(ends, topics.out(), total);
            assertThat(b.isAlive()).as(b.logs()).isTrue();
            timeline.mark("produced %d records; output stands at %d", total, ends.total(topics.out()));

            Map<String, List<Long>> numbers = numbersByTag(topics.out());
            for (Map.Entry<String, List<Long>> tag : numbers.entrySet()) {
                java.util.Set<Long> seen = new java.util.HashSet<>();
                List<Long> twice = tag.getValue().stream().filter(n -> !seen.add(n)).limit(10).toList();
                assertThat(twice).as("tag %s: numbers issued twice (a's late number %d of %s)", tag.getKey(), lateNumber, lateTag)
                        .isEmpty();
            }
            List<Long> late = numbers.get(lateTag);
            int landedAt = late.indexOf(lateNumber);
            assertThat(landedAt).as("a's late number %d reached the output after the resume", lateNumber).isNotNegative();
            assertThat(late.subList(0, landedAt)).as("b numbered %s above %d before a's record landed", lateTag, lateNumber)
                    .anyMatch(n -> n > lateNumber);
            timeline.mark("tag %s: a's number %d landed behind %d higher numbers of b; no number twice in %d tags", lateTag,
                    lateNumber, late.subList(0, landedAt).stream().filter(n -> n > lateNumber).count(), numbers.size());
        }
    }

    /**
     * a stops itself right after it reserved a new segment and took its first number, before the reservation's
     * acknowledgement ({@code -Dsnowstamp.test.freeze-step=segment}): the reservation is still in a's producer, so b,
     * taking the partition over, never sees the segment and numbers the tag from its start. Once resumed, a must not
     * send that number: it waits for the acknowledgement, then finds its lease lapsed and drops it.
     */
    @Test
    void shouldNeverIssueANumberOfASegmentTheOldOwnerReservedUnseen() throws Exception {
        Timeline timeline = new Timeline("sequence-unseen-segment");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        Stamper base = stamperWithTags(topics);
        AtomicLong produced = new AtomicLong();
        Thread producer = new Thread(() -> produce(topics.in(), produced), "sequence-unseen-segment-producer");
        try (TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            producer.start();
            ChildJvm b = start(base);
            Map<Integer, Long> before = ends.committedPerPartition(topics.out());
            assertThat(ends.awaitEveryPartitionGrown(topics.out(), before, 50, Duration.ofSeconds(120))).as("b stamps").isTrue();
            timeline.mark("b stamping alone");

            // a's producer holds every record for 2 s (no commit comes in between: the freeze is inside a record's
            // processing), so the reservation is surely still in it when a stops
            ChildJvm a = start(base.instance("a").with("kafka.producer.linger.ms", "2000")
                    .withJvmArg("-Dsnowstamp.test.freeze-at-record=1").withJvmArg("-Dsnowstamp.test.freeze-step=segment"));
            producing = java.util.stream.Stream.concat(TAGS.stream(), FRESH.stream()).toList();   // new segments on a's partition
            a.awaitFrozen(180);
            Matcher frozenAt = FROZEN_AT_SEGMENT.matcher(a.stderr());
            assertThat(frozenAt.find()).as(a.stderr()).isTrue();
            long number = Long.parseLong(frozenAt.group(1));
            String tag = frozenAt.group(2);
            timeline.mark("a stopped itself after reserving the segment of tag %s from %d, before its acknowledgement", tag, number);

            before = ends.committedPerPartition(topics.out());
            assertThat(ends.awaitEveryPartitionGrown(topics.out(), before, 2 * RATE, Duration.ofSeconds(120)))
                    .as("a's partition moved to b, which numbers it steadily").isTrue();
            timeline.mark("every partition stamps again while a is frozen");
            a.thaw();
            a.awaitLog("resumed (SIGCONT)", 30);
            timeline.mark("a resumed (SIGCONT)");
            Thread.sleep(5_000);

            stop.set(true);
            producer.join(Duration.ofSeconds(30).toMillis());
            awaitStable(ends, topics.out(), produced.get());
            assertThat(b.isAlive()).as(b.logs()).isTrue();

            Map<String, List<Long>> numbers = numbersByTag(topics.out());
            for (Map.Entry<String, List<Long>> entry : numbers.entrySet()) {
                java.util.Set<Long> seen = new java.util.HashSet<>();
                List<Long> twice = entry.getValue().stream().filter(n -> !seen.add(n)).limit(10).toList();
                assertThat(twice).as("tag %s: numbers issued twice (a froze at number %d of %s)", entry.getKey(), number, tag)
                        .isEmpty();
            }
            assertThat(numbers.get(tag)).as("b numbered %s from its start, never having seen a's segment", tag).contains(number);
            assertThat(a.stderr()).as("a dropped its number: its lease lapsed while the number waited for its segment")
                    .contains("while an ID was being taken");
            timeline.mark("no number twice in %d tags; a dropped number %d of %s", numbers.size(), number, tag);
        }
    }

    private ChildJvm start(Stamper stamper) throws Exception {
        ChildJvm child = stamper.start();
        started.add(child);
        child.awaitLog("taken by " + stamper.instanceId() + "#", 180);
        return child;
    }

    /** Produces at {@link #RATE} records a second, the tags in turn (the record key is the tag), until told to stop. */
    private void produce(String topic, AtomicLong produced) {
        long begin = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int n = 0; !stop.get(); n++) {
                List<String> tags = producing;
                String tag = tags.get(n % tags.size());
                producer.send(new ProducerRecord<>(topic, tag.getBytes(StandardCharsets.UTF_8),
                        ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8)));
                produced.incrementAndGet();
                if (n % 20 == 19) {
                    long wait = begin + 1_000_000_000L * (n + 1) / RATE - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000);
                    }
                }
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until the output holds at least every record produced (at-least-once may stamp some twice) and stops growing. */
    private static void awaitStable(TopicEnds ends, String topic, long total) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        long previous = -1;
        while (System.nanoTime() < deadline) {
            long now = ends.total(topic);
            if (now >= total && now == previous) {
                return;
            }
            previous = now;
            Thread.sleep(3_000);
        }
        throw new AssertionError("the output did not reach " + total + " records and stand still in time: " + ends.total(topic));
    }

    /** Per tag, its numbers in offset order (a tag lives in one output partition). */
    private static Map<String, List<Long>> numbersByTag(String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<String, List<Long>> numbers = new TreeMap<>();
        TopicReader.readToEnd(props, topic, Duration.ofSeconds(120), (ConsumerRecord<byte[], byte[]> record) ->
                numbers.computeIfAbsent(new String(record.headers().lastHeader(IdHeader.TAG).value(), StandardCharsets.UTF_8),
                        ignored -> new ArrayList<>()).add(IdHeader.parse(record.headers().lastHeader(IdHeader.ID).value())));
        return numbers;
    }
}
