package io.snowstamp.it.fault;

import io.snowstamp.id.IdLayout;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Faketime;
import io.snowstamp.testing.LoggedClock;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.StampedRecords.Stamped;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stamper whose clock is an hour behind takes over from one with the right clock (a new host
 * with a bad clock): its IDs must continue above the old ones, not an hour below them, because the
 * resume point comes from the state and the output, not from the clock.
 *
 * <p>The second instance runs under libfaketime ({@code faketime -f -1h}); the test checks from
 * its log that it really saw a clock an hour behind, and from its IDs that it stamped right after
 * the first instance's last ID. Skipped where faketime is not installed.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(300)
class ClockBehindIT extends OnSharedBroker {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final int BATCH = 3_000;
    private static final Duration BEHIND = Duration.ofHours(1);

    @TempDir
    Path work;

    @BeforeEach
    void requireFaketime() {
        Faketime.assumeAvailable();
    }

    @Test
    void shouldContinueAboveTheOldIdsWhenTheNextInstanceRunsAnHourBehind() throws Exception {
        Timeline timeline = new Timeline("clock-behind-stop");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper a = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        Stamper b = a.instance("b").withClockOffset("-1h");

        try (ChildJvm first = a.start(); TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, BATCH);
            Verification.awaitStamped(broker.bootstrapServers(), topics, BATCH);
            assertThat(first.terminate(60)).as(first.logs()).isIn(0, 143);
            timeline.mark("A stamped %d and stopped", BATCH);
            Map<Integer, Long> handover = ends.perPartition(topics.out());

            Instant realStart = Instant.now();
            try (ChildJvm second = b.start()) {
                NumberedProducer.send(broker.bootstrapServers(), topics.in(), BATCH, BATCH);
                Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, 2 * BATCH);
                timeline.mark("B stamped: %s", verify.summaryLine());

                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(2 * BATCH));
                assertThat(verify.exitCode()).as(verify.toString()).isZero();
                assertClockWasBehind(second, realStart);
                assertHandover(topics, handover, second);
                assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
            }
        }
    }

    @Test
    void shouldContinueAboveTheOldIdsWhenAnInstanceAnHourBehindTakesOverFromAKilledOne() throws Exception {
        Timeline timeline = new Timeline("clock-behind-kill");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper a = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        Stamper b = a.instance("b").withClockOffset("-1h");

        // the load runs until B has stamped in every partition, however long the starts take: A is killed
        // while records arrive, and B takes over with records still to stamp in every partition
        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), NumberedProducer.UNTIL_STOPPED, 600).start();
             ChildJvm first = a.start(); TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            // A has committed records in every partition, and is writing more
            assertThat(ends.awaitEveryPartitionCommitted(topics.out(), 100, Duration.ofSeconds(120))).as(first.logs()).isTrue();
            assertThat(ends.awaitAbove(topics.out(), ends.total(topics.out()), Duration.ofSeconds(60))).as(first.logs()).isTrue();
            first.kill();
            Map<Integer, Long> handover = ends.perPartition(topics.out());
            timeline.mark("A killed while stamping; output ends %s", handover);

            Instant realStart = Instant.now();
            try (ChildJvm second = b.start()) {
                assertThat(ends.awaitEveryPartitionGrown(topics.out(), handover, 100, Duration.ofSeconds(120)))
                        .as("B commits records in every partition\n%s", second.logs()).isTrue();
                long produced = producer.stop();
                Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, produced);
                timeline.mark("B stamped: %s", verify.summaryLine());

                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(produced));
                assertThat(verify.exitCode()).as(verify.toString()).isZero();
                assertClockWasBehind(second, realStart);
                assertHandover(topics, handover, second);
                assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
            }
        }
    }


    /** The resume log lines of the instance under faketime show a clock about an hour behind the real one. */
    private static void assertClockWasBehind(ChildJvm child, Instant realStart) throws Exception {
        List<Instant> clocks = LoggedClock.readings(child.stderr());
        assertThat(clocks).as("faketime had no effect, or the resume log line changed\n%s", child.logs()).isNotEmpty();
        Instant expected = realStart.minus(BEHIND);
        for (Instant clock : clocks) {
            assertThat(clock).as("the clock B logged, an hour behind the real one\n%s", child.logs())
                    .isBetween(expected.minus(Duration.ofMinutes(2)), expected.plus(Duration.ofMinutes(5)));
        }
    }

    /**
     * In every partition, B's records (at or above the handover offset) carry IDs above all of A's,
     * with times right after A's last one: continued above it, not an hour behind.
     */
    private static void assertHandover(Stamper.Topics topics, Map<Integer, Long> handover, ChildJvm second) throws Exception {
        List<Stamped> records = StampedRecords.read(broker.bootstrapServers(), topics.out());
        for (Map.Entry<Integer, Long> entry : handover.entrySet()) {
            int partition = entry.getKey();
            long boundary = entry.getValue();
            List<Stamped> ofA = records.stream().filter(r -> r.partition() == partition && r.offset() < boundary).toList();
            List<Stamped> ofB = records.stream().filter(r -> r.partition() == partition && r.offset() >= boundary).toList();
            assertThat(ofA).as("partition %d: records stamped by A", partition).isNotEmpty();
            assertThat(ofB).as("partition %d: records stamped by B", partition).isNotEmpty();

            long lastOfA = ofA.stream().mapToLong(Stamped::id).max().orElseThrow();
            long lastMillisOfA = LAYOUT.decode(lastOfA).wallMillis();
            long firstOfB = ofB.stream().mapToLong(Stamped::id).min().orElseThrow();
            assertThat(firstOfB).as("partition %d: B's first ID above A's last", partition).isGreaterThan(lastOfA);
            for (Stamped r : ofB) {
                assertThat(LAYOUT.decode(r.id()).wallMillis())
                        .as("partition %d offset %d: ID %d must be stamped right after A's last ID %d (%s), not an hour behind\n%s",
                                partition, r.offset(), r.id(), lastOfA, Instant.ofEpochMilli(lastMillisOfA), second.logs())
                        .isBetween(lastMillisOfA, lastMillisOfA + 60_000);
            }
        }
    }
}
