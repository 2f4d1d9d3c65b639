package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Faketime;
import io.snowstamp.testing.LoggedClock;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The generator state is lost, or was never written, and the IDs already in the output topic
 * must still never be issued again: the tail guard (the stamper reads the last IDs of its own
 * output partition at task start) is what saves these cases.
 *
 * <p>In every case the second run starts with its clock ten minutes behind the first run's last
 * ID ({@code faketime -f -10m}), so a resume point that came from the wall clock alone would
 * issue IDs below the ones already out (verify reports them as decreases, and could as
 * duplicates). Without faketime the tests still run, but then the clock has moved forward between
 * the runs and a pure wall-clock resume would pass too.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Order(6)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(180)
class StateLossIT extends OnSharedBroker {
    private static final int BATCH = 2_000;
    private static final String BEHIND = "-10m";

    @TempDir
    Path work;

    /** a. The instance's local state directory is deleted between two runs; the changelog still has the state. */
    @Test
    void shouldNotReissueIdsAfterTheLocalStateIsDeleted() throws Exception {
        Timeline timeline = new Timeline("state-loss-local");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper first = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        runToCompletion(first, 0, BATCH);
        first.deleteStateDir();
        timeline.mark("first run stamped %d; local state deleted", BATCH);

        Verification verify = secondRun(behind(first), BATCH, 2 * BATCH, timeline);
        assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(2 * BATCH));
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
    }

    /**
     * b. The changelog topic is deleted and the local state with it (a botched reset); the
     * consumer group, and so the input offsets, survive: the stamper goes on from where it was,
     * with no state at all.
     */
    @Test
    void shouldNotReissueIdsAfterTheChangelogIsDeleted() throws Exception {
        Timeline timeline = new Timeline("state-loss-changelog");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper first = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        runToCompletion(first, 0, BATCH);
        deleteTopic(first.applicationId() + "-worker-state-changelog");
        first.deleteStateDir();
        timeline.mark("first run stamped %d; changelog and local state deleted", BATCH);

        Verification verify = secondRun(behind(first), BATCH, 2 * BATCH, timeline);
        assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(2 * BATCH));
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
    }

    /**
     * b2. As b, while the header format changes: the first run writes the compact format
     * ({@code snowid}, 8 bytes), the second the text format. The second run's tail guard must read the
     * first run's compact IDs, and verify reads both formats (and the compact provenance) in one topic.
     */
    @Test
    void shouldNotReissueIdsAfterTheChangelogIsDeletedWhileTheHeaderFormatChanges() throws Exception {
        Timeline timeline = new Timeline("state-loss-header-format");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper first = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a")
                .with("stamp.header-format", "compact");
        runToCompletion(first, 0, BATCH);
        deleteTopic(first.applicationId() + "-worker-state-changelog");
        first.deleteStateDir();
        timeline.mark("first run stamped %d in the compact format; changelog and local state deleted", BATCH);

        Verification verify = secondRun(behind(first.with("stamp.header-format", "text")), BATCH, 2 * BATCH, timeline);
        assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(2 * BATCH));
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
    }

    /**
     * c. A new application.id on the same topics: no state, no offsets, so the new application
     * stamps the whole input again from the beginning. Every record of the first run is stamped
     * twice (extra = the first run's records) but no ID twice, and IDs keep increasing in every
     * partition.
     */
    @Test
    void shouldNotReissueIdsWhenANewApplicationIdStampsTheSameTopics() throws Exception {
        Timeline timeline = new Timeline("state-loss-new-app");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper first = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        runToCompletion(first, 0, BATCH);
        timeline.mark("first application stamped %d", BATCH);

        // the registry is on, but Stamper gives each application an ID space of its own: it lets the second application
        // take the same workers, as it would a deployment configured with its own id.space; what protects is the output's tail
        Stamper second = behind(first.instance("b").withApplicationId(TestBroker.unique("app")));
        Verification verify = secondRun(second, BATCH, 3 * BATCH, timeline);
        assertThat(verify.summaryLine()).as(verify.toString())
                .isEqualTo("records=" + 3 * BATCH + " duplicates=0 missing=0 extra=" + BATCH);
        assertThat(verify.decreases()).as(verify.toString()).isEmpty();
    }

    /**
     * d. An at-least-once stamper is SIGKILLed after it wrote records whose state and input
     * offsets it had not committed yet (outputs durable, state not): the restarted stamper finds
     * those inputs in the output by their provenance and does not stamp them again, and the
     * records after them must get IDs above the ones they got, which only the output topic knows
     * (no decrease in any partition).
     */
    @Test
    void shouldNotReissueIdsOfUncommittedOutputAfterAnAtLeastOnceCrash() throws Exception {
        Timeline timeline = new Timeline("state-loss-alos");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a")
                .with("processing.guarantee", "at_least_once")
                .with("kafka.commit.interval.ms", "10000");
        try (ChildJvm first = stamper.start(); TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, BATCH);
            TestBroker.awaitCommitted(broker.bootstrapServers(), stamper.applicationId(), topics.in(), BATCH, Duration.ofSeconds(60));
            // right after a commit: the next one is 10 s away
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), BATCH, BATCH);
            assertThat(ends.awaitAbove(topics.out(), 2 * BATCH - 1, Duration.ofSeconds(30))).as(first.logs()).isTrue();
            first.kill();
            assertThat(committedInput(stamper))
                    .as("input offsets committed before the kill (the second batch must not be committed yet)")
                    .isEqualTo(BATCH);
            timeline.mark("killed with %d records stamped, %d committed", 2 * BATCH, BATCH);
        }

        try (ChildJvm second = behind(stamper).start()) {
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), 2 * BATCH, BATCH);
            Verification verify = Verification.awaitSettled(broker.bootstrapServers(), topics.out(), topics.in(), 3 * BATCH,
                    Duration.ofSeconds(90));
            timeline.mark("restarted: %s", verify.summaryLine());
            assertClockBehind(second);
            assertThat(verify.summaryLine()).as("the killed stamper's uncommitted inputs are not stamped again\n%s", verify)
                    .isEqualTo("records=" + 3 * BATCH + " duplicates=0 missing=0 extra=0");
            assertThat(verify.decreases()).as(verify.toString()).isEmpty();
            assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
        }
    }

    // ---- steps --------------------------------------------------------------------------------

    /** The stamper with its clock ten minutes behind, when faketime is installed. */
    private static Stamper behind(Stamper stamper) {
        return Faketime.available() ? stamper.withClockOffset(BEHIND) : stamper;
    }

    /** Starts {@code stamper}, stamps records [first, first + count), stops it cleanly. */
    private static void runToCompletion(Stamper stamper, long first, long count) throws Exception {
        try (ChildJvm child = stamper.start()) {
            NumberedProducer.send(broker.bootstrapServers(), stamper.topics().in(), first, count);
            Verification.awaitStamped(broker.bootstrapServers(), stamper.topics(), first + count);
            assertThat(child.terminate(60)).as(child.logs()).isIn(0, 143);
        }
    }

    /** Starts {@code stamper}, produces BATCH more records from {@code first}, waits for {@code records} output records. */
    private static Verification secondRun(Stamper stamper, long first, long records, Timeline timeline) throws Exception {
        try (ChildJvm child = stamper.start()) {
            NumberedProducer.send(broker.bootstrapServers(), stamper.topics().in(), first, BATCH);
            Verification verify = Verification.awaitStamped(broker.bootstrapServers(), stamper.topics(), records);
            timeline.mark("second run: %s", verify.summaryLine());
            assertClockBehind(child);
            assertThat(child.terminate(60)).as(child.logs()).isIn(0, 143);
            return verify;
        }
    }


    /** Under faketime, the second run's resume log shows a clock about ten minutes behind: the skew took effect. */
    private static void assertClockBehind(ChildJvm child) throws IOException {
        if (!Faketime.available()) {
            return;
        }
        List<Instant> clocks = LoggedClock.readings(child.stderr());
        assertThat(clocks).as(child.logs()).isNotEmpty();
        Instant expected = Instant.now().minus(Duration.ofMinutes(10));
        assertThat(clocks).as(child.logs()).allSatisfy(clock ->
                assertThat(clock).isBetween(expected.minus(Duration.ofMinutes(3)), expected.plus(Duration.ofMinutes(1))));
    }

    private static void deleteTopic(String topic) throws Exception {
        TestBroker.deleteTopic(broker.bootstrapServers(), topic);
    }

    /** The sum of the input offsets the application's consumer group has committed. */
    private static long committedInput(Stamper stamper) throws Exception {
        return TestBroker.committedOffsets(broker.bootstrapServers(), stamper.applicationId(), stamper.topics().in())
                .values().stream().mapToLong(Long::longValue).sum();
    }
}
