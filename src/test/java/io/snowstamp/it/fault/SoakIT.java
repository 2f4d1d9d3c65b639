package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.CrashLoop;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.Verification;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The long version of {@link EosKillRestartIT}, run on demand only:
 * {@code mvn -B -o failsafe:integration-test failsafe:verify -Dit.test=SoakIT -Dsnowstamp.soak=true}
 * (after {@code mvn -q -B -o -DskipTests package}). Defaults: 1,000,000 records at 2,000 a second
 * and 50 SIGKILLs under exactly-once; {@code -Dsnowstamp.soak.records=N},
 * {@code -Dsnowstamp.soak.kills=K}, {@code -Dsnowstamp.soak.rate=R} and
 * {@code -Dsnowstamp.fault.seed=S} change them. Ends with verify over everything: clean.
 */
@Tag("integration")
@Tag("soak")
@EnabledIfSystemProperty(named = "snowstamp.soak", matches = "true")
@Timeout(value = 3, unit = TimeUnit.HOURS)
class SoakIT extends OnSharedBroker {
    @TempDir
    Path work;

    @Test
    void shouldStampEveryRecordOnceThroughManyCrashes() throws Exception {
        long records = Long.getLong("snowstamp.soak.records", 1_000_000);
        int kills = Integer.getInteger("snowstamp.soak.kills", 50);
        int rate = Integer.getInteger("snowstamp.soak.rate", 2_000);
        long seed = Long.getLong("snowstamp.fault.seed", System.nanoTime());
        Timeline timeline = new Timeline("soak");
        timeline.mark("%d records at %d/s, %d kills, seed %d", records, rate, kills, seed);

        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "soak-1");
        CrashLoop crashes = new CrashLoop(spec, new Random(seed), timeline);

        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), 0, records, rate,
                Duration.ofMinutes(2)).start();
             ChildJvm stamper = crashes.run(spec.start(), kills)) {
            long produced = producer.finish(Duration.ofSeconds(records / rate + 600));
            timeline.mark("produced %d", produced);

            Verification verify = Verification.await(broker.bootstrapServers(), topics.out(), topics.in(),
                    v -> {
                        timeline.mark("%s", v.summaryLine());
                        return v.records() >= produced && v.missing() == 0;
                    }, Duration.ofMinutes(20));
            timeline.mark("verified: %s; restarts refused by Kafka Streams (local state deleted): %d",
                    verify.summaryLine(), crashes.refusals().size());
            assertThat(verify.summaryLine()).as("seed %d\n%s", seed, verify).isEqualTo(Verification.clean(produced));
            assertThat(verify.exitCode()).as(verify.toString()).isZero();
            assertThat(stamper.isAlive()).as(stamper.logs()).isTrue();
            assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
        }
    }
}
