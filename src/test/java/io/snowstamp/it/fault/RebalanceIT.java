package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
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

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Partitions move between three instances of one application (own instance ids and state
 * directories) while a producer keeps writing: instances join, leave cleanly (SIGTERM), crash
 * (SIGKILL) and come back. Every move hands a partition's worker to another process, which must
 * resume above everything the previous holder issued. Exactly-once; verified clean at the end.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Order(5)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(900)
class RebalanceIT extends OnSharedBroker {
    private static final int PARTITIONS = 6;
    private static final int RATE = 500;

    @TempDir
    Path work;

    @Test
    void shouldStampEveryRecordOnceWhileInstancesJoinLeaveCrashAndReturn() throws Exception {
        Timeline timeline = new Timeline("rebalance");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        Stamper a = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        Stamper b = a.instance("b");
        Stamper c = a.instance("c");
        List<ChildJvm> started = new ArrayList<>();

        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), NumberedProducer.UNTIL_STOPPED, RATE).start();
             TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            ChildJvm runningA = joined(a, started, ends, timeline);
            ChildJvm runningB = joined(b, started, ends, timeline);
            ChildJvm runningC = joined(c, started, ends, timeline);

            assertThat(runningB.terminate(60)).as(runningB.logs()).isIn(0, 143);
            progress(ends, topics, timeline, "B stopped (SIGTERM)");

            runningC.kill();
            progress(ends, topics, timeline, "C killed");
            runningC = rejoined(c, started, ends, timeline);

            runningB = joined(b, started, ends, timeline);
            runningA.kill();
            progress(ends, topics, timeline, "A killed");
            runningA = rejoined(a, started, ends, timeline);

            long produced = producer.stop();
            Verification verify = Verification.await(broker.bootstrapServers(), topics.out(), topics.in(),
                    v -> v.records() >= produced && v.missing() == 0, Duration.ofSeconds(120));
            timeline.mark("produced %d; verified: %s", produced, verify.summaryLine());

            assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(produced));
            assertThat(verify.exitCode()).as(verify.toString()).isZero();
            for (ChildJvm instance : List.of(runningA, runningB, runningC)) {
                assertThat(instance.isAlive()).as(instance.logs()).isTrue();
                assertThat(instance.terminate(60)).as(instance.logs()).isIn(0, 143);
            }
        } finally {
            for (ChildJvm instance : started) {
                instance.close();
            }
        }
    }

    /** Starts an instance and waits until it has taken a partition and the output has grown. */
    private static ChildJvm joined(Stamper stamper, List<ChildJvm> started, TopicEnds ends, Timeline timeline) throws Exception {
        ChildJvm child = stamper.start();
        started.add(child);
        return tookPartitions(stamper, child, ends, timeline);
    }

    /** Restarts a SIGKILLed instance on its own state and waits until it has taken a partition again. */
    private static ChildJvm rejoined(Stamper stamper, List<ChildJvm> started, TopicEnds ends, Timeline timeline) throws Exception {
        ChildJvm child = stamper.restartAfterCrash(refusal -> timeline.mark("restart refused, local state deleted: %s", refusal));
        started.add(child);
        return tookPartitions(stamper, child, ends, timeline);
    }

    private static ChildJvm tookPartitions(Stamper stamper, ChildJvm child, TopicEnds ends, Timeline timeline) throws Exception {
        // the resume log line names the holder: instance id, then the stream thread
        child.awaitLog("taken by " + stamper.instanceId() + "#", 180);
        progress(ends, stamper.topics(), timeline, stamper.instanceId() + " took partitions");
        return child;
    }

    /**
     * Waits until the output has grown by a few hundred records since now. The bound is minutes, far from
     * the seconds this takes: test classes run side by side, and a loaded machine slows a new owner's first records.
     */
    private static void progress(TopicEnds ends, Stamper.Topics topics, Timeline timeline, String after) throws Exception {
        long before = ends.total(topics.out());
        assertThat(ends.awaitAbove(topics.out(), before + 300, Duration.ofSeconds(240)))
                .as("output grows after: %s", after).isTrue();
        timeline.mark("%s; output at %d", after, ends.total(topics.out()));
    }
}
