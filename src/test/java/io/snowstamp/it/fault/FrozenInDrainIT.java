package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Faketime;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
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
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once, the schedule a review found after issue 39's item 6: a transaction of records with no input offsets. An
 * owner X restores records its predecessor set aside, and with its input idle stamps them from the drain punctuation —
 * a task that consumed nothing since it started, so Kafka Streams commits with an empty offset map, and Kafka's producer
 * then sends no offsets: nothing checks X's group generation. X stops itself (SIGSTOP) after that drain, before the
 * commit's flush, its IDs still in its producer (linger 60 s): nothing on the output partition for the next owner's
 * fence to find, and no ID left to issue after it wakes (the lease check before each ID stops an owner frozen in the
 * middle of a drain: tried, its task is closed at its next ID). Y, its
 * clock 10 s behind, takes the partition, stamps the same records set aside and the input that follows. X wakes and
 * commits. Without {@code runtime/GenerationCheck} that commit went through: every record of the drain twice in the
 * read_committed output. With it the commit carries the partition's committed offset, the group coordinator refuses it,
 * and {@code verify} finds every input once.
 *
 * <p>Forced, not hoped for: A's lease reader withholds partition 0's confirmations from 3 s after it started stamping
 * ({@code -Dsnowstamp.test.hold-confirmations}), so A sets the rest of the input aside and commits it; A is SIGKILLed;
 * X freezes before the first flush of a transaction of at least 50 records ({@code -Dsnowstamp.test.freeze-before-flush},
 * {@code runtime/CommitFreezeHook}): only the drain's.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: child JVMs and a session timeout; the default tier stays under 8 minutes (development.md)
@Timeout(420)
class FrozenInDrainIT extends OnSharedBroker {
    private static final Pattern SET_ASIDE = Pattern.compile("partition 0: (\\d+) records set aside before the restart");
    private static final int FIRST_BATCH = 1_600;
    private static final int SECOND_BATCH = 200;

    @TempDir
    Path work;

    @BeforeEach
    void requireFaketime() {
        Faketime.assumeAvailable();
    }

    @Test
    void shouldNotCommitADrainOfAnOwnerWhosePartitionMovedWhileItWasStopped() throws Exception {
        Timeline timeline = new Timeline("frozen-in-drain");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 1);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");

        try (TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            try (ChildJvm a = spec.withJvmArg("-Dsnowstamp.test.hold-confirmations=0:3:300").start()) {
                new NumberedProducer(broker.bootstrapServers(), topics.in(), 0, FIRST_BATCH, 200, Duration.ofMinutes(2)).start()
                        .finish(Duration.ofSeconds(60));
                Thread.sleep(3_000);    // A's commits carry the records it set aside (one every 100 ms)
                a.kill();
                timeline.mark("A stamped partition 0 for 3 s, set the rest aside, and was SIGKILLed");
            }

            Stamper frozen = spec.instance("x").withJvmArg("-Dsnowstamp.test.freeze-before-flush=50")
                    .with("kafka.producer.linger.ms", "60000");
            ChildJvm x = frozen.launch();
            try {
                x.awaitFrozen(180);
                Matcher restored = SET_ASIDE.matcher(x.stderr());
                assertThat(restored.find()).as("X restored records A set aside\n%s", x.logs()).isTrue();
                int aside = Integer.parseInt(restored.group(1));
                assertThat(aside).as("the input after A's confirmations stopped waited").isGreaterThan(100);
                timeline.mark("X restored %d records set aside, stamped them, and stopped itself before the flush: %s", aside, hookLine(x));

                try (ChildJvm y = spec.instance("y").withClockOffset("-10s").launch()) {
                    y.awaitLog("taken by y#", 180);
                    long end = ends.committedPerPartition(topics.out()).get(0);
                    new NumberedProducer(broker.bootstrapServers(), topics.in(), FIRST_BATCH, SECOND_BATCH, 200, Duration.ofMinutes(2))
                            .start().finish(Duration.ofSeconds(60));
                    assertThat(ends.awaitEveryPartitionGrown(topics.out(), Map.of(0, end), SECOND_BATCH, Duration.ofSeconds(120)))
                            .as("Y (clock 10 s behind) stamps the records set aside and the new input\n%s", y.logs()).isTrue();
                    timeline.mark("Y took partition 0 and stamped it while X was stopped");

                    x.thaw();
                    x.awaitLog("resumed (SIGCONT)", 30);
                    Thread.sleep(5_000);    // X's commit (refused, or not)
                    String refused = x.stderr().lines().filter(l -> l.contains("CommitFailedException")).findFirst().orElse(null);
                    timeline.mark("X woke: %s", refused);
                    assertThat(refused).as("the group coordinator refused X's commit\n%s", x.logs()).contains("consumer group metadata mismatch");

                    Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, FIRST_BATCH + SECOND_BATCH);
                    timeline.mark("verified (read_committed): %s", verify.summaryLine());
                    assertThat(verify.summaryLine()).as("%s\n%s\n%s", verify, x.logs(), y.logs())
                            .isEqualTo(Verification.clean(FIRST_BATCH + SECOND_BATCH));
                    assertThat(verify.exitCode()).as("no ID twice or out of order\n" + verify).isZero();
                    assertThat(y.isAlive()).as(y.logs()).isTrue();
                }
            } finally {
                if (x.isFrozen()) {
                    x.thaw();
                }
                x.close();
            }
        }
    }

    private static String hookLine(ChildJvm x) throws Exception {
        return x.stderr().lines().filter(l -> l.contains("before the flush of")).findFirst().orElse("?");
    }
}
