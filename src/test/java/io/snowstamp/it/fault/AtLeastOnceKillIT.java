package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.CrashLoop;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.Verification;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * At-least-once under repeated crashes. A SIGKILL loses the stamper's uncommitted input offsets and
 * state while its output is already durable, so the inputs after the last commit come again to the
 * next owner — which finds them in the output by their provenance and does not stamp them again
 * ({@code resume/StampedInputs}): each input once in the output ({@code extra=0}; before, every kill
 * left up to a commit interval of copies). What must also hold: no ID issued twice, nothing missing,
 * and IDs increasing within every partition.
 */
@Tag("integration")
@Order(7)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(600)
class AtLeastOnceKillIT extends OnSharedBroker {
    private static final int KILLS = 6;
    private static final int RATE = 600;

    @TempDir
    Path work;

    @Test
    void shouldNeverRepeatAnIdWhenRecordsAreStampedAgain() throws Exception {
        long seed = Long.getLong("snowstamp.fault.seed", System.nanoTime());
        Timeline timeline = new Timeline("alos-kill");
        timeline.mark("seed %d", seed);
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "alos-1")
                .with("processing.guarantee", "at_least_once")
                // commit every second (default 30 s) so a crash loses a little, not everything since the start
                .with("kafka.commit.interval.ms", "1000");
        CrashLoop crashes = new CrashLoop(spec, new Random(seed), timeline);

        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), NumberedProducer.UNTIL_STOPPED, RATE).start();
             ChildJvm stamper = crashes.run(spec.start(), KILLS)) {
            long produced = producer.stop();
            timeline.mark("produced %d", produced);

            Verification verify = Verification.awaitSettled(broker.bootstrapServers(), topics.out(), topics.in(), produced,
                    Duration.ofSeconds(120));
            timeline.mark("verified: %s", verify.summaryLine());

            assertThat(verify.duplicates()).as("seed %d\n%s", seed, verify).isZero();
            assertThat(verify.missing()).as(verify.toString()).isZero();
            assertThat(verify.extra()).as("inputs stamped twice: the next owner skips what the killed one stamped\n%s", verify)
                    .isZero();
            assertThat(verify.summaryLine()).isEqualTo("records=" + produced + " duplicates=0 missing=0 extra=0");
            assertThat(verify.decreases()).as(verify.toString()).isEmpty();
            assertThat(stamper.isAlive()).as(stamper.logs()).isTrue();
            assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
        }
    }
}
