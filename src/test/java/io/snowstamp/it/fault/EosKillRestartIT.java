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
 * Exactly-once under repeated crashes: one stamper, SIGKILLed ten times at random moments (during
 * start-up and restore, and while stamping with a transaction open) and restarted on the same state
 * directory and instance id, while a producer keeps writing. Every record produced must end up
 * stamped exactly once, with no ID issued twice, as read_committed consumers see it.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Order(4)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(900)
class EosKillRestartIT extends OnSharedBroker {
    private static final int KILLS = 10;
    private static final int RATE = 600;

    @TempDir
    Path work;

    @Test
    void shouldStampEveryRecordOnceAcrossKillsAndRestarts() throws Exception {
        long seed = Long.getLong("snowstamp.fault.seed", System.nanoTime());
        Timeline timeline = new Timeline("eos-kill");
        timeline.mark("seed %d (-Dsnowstamp.fault.seed=%d replays the kill moments)", seed, seed);
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "eos-1");
        CrashLoop crashes = new CrashLoop(spec, new Random(seed), timeline);

        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), NumberedProducer.UNTIL_STOPPED, RATE).start();
             ChildJvm stamper = crashes.run(spec.start(), KILLS)) {
            long produced = producer.stop();
            timeline.mark("produced %d", produced);

            Verification verify = Verification.await(broker.bootstrapServers(), topics.out(), topics.in(),
                    v -> v.records() >= produced && v.missing() == 0, Duration.ofSeconds(120));
            timeline.mark("verified: %s; restarts refused by Kafka Streams: %d", verify.summaryLine(), crashes.refusals().size());
            assertThat(verify.summaryLine()).as("seed %d\n%s\n%s", seed, verify, stamper.logs())
                    .isEqualTo(Verification.clean(produced));
            assertThat(verify.exitCode()).as(verify.toString()).isZero();
            assertThat(produced).isGreaterThan(10_000);
            assertThat(stamper.isAlive()).as(stamper.logs()).isTrue();
            assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
        }
    }
}
