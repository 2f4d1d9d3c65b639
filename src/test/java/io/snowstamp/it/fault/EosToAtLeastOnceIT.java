package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Verification;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A switch from exactly-once to at-least-once right after a crash (review finding c): the SIGKILLed exactly-once
 * stamper leaves the records of its open transaction in the output, which the broker aborts later (its transaction
 * timeout). The at-least-once start reads its output back for the inputs already stamped; the aborted records' inputs
 * are not in the committed output and must be stamped. Before, the start read them read_uncommitted and skipped them:
 * missing from the committed output for good.
 */
@Tag("integration")
@Timeout(600)
class EosToAtLeastOnceIT extends OnSharedBroker {
    private static final int RATE = 600;

    @TempDir
    Path work;

    @Test
    void shouldStampEveryInputOfTheCrashedTransactionsAfterTheSwitch() throws Exception {
        String servers = broker.bootstrapServers();
        Stamper.Topics topics = Stamper.Topics.create(servers, 4);
        Stamper exactlyOnce = Stamper.of(work, servers, TestBroker.unique("app"), topics, "switch-1");
        try (NumberedProducer producer = new NumberedProducer(servers, topics.in(), NumberedProducer.UNTIL_STOPPED, RATE).start()) {
            try (ChildJvm stamper = exactlyOnce.start()) {
                Thread.sleep(8_000);        // stamping under load: every partition has an open transaction with records
                stamper.kill();
            }
            try (ChildJvm stamper = exactlyOnce.with("processing.guarantee", "at_least_once").start()) {
                Thread.sleep(5_000);
                long produced = producer.stop();

                Verification verify = Verification.awaitSettled(servers, topics.out(), topics.in(), produced, Duration.ofSeconds(150));

                assertThat(verify.missing()).as("inputs of the aborted transactions skipped as already stamped\n%s\n%s", verify,
                        stamper.logs()).isZero();
                assertThat(verify.duplicates()).as(verify.toString()).isZero();
                assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
            }
        }
    }
}
