package io.snowstamp.it;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Http;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, {@code /health/ready}: not ready until every task here has taken its lease, read back. The lease reader
 * of the child JVM withholds partition 0's confirmations from its first round for 12 s
 * ({@code -Dsnowstamp.test.hold-confirmations}, forced, not hoped for): its task has restored and started, no previous
 * owner has a term to wait out, and still the instance answers 503 naming partition 0 alone until the read-back comes.
 * A child JVM: the hook is a system property, and the integration tests share one JVM.
 */
@Tag("integration")
@Timeout(180)
class ReadyAfterReadBackIT extends OnSharedBroker {
    private static final long HOLD_SECONDS = 12;
    private static final String NOT_READ_BACK = "partitions [0] wait for their lease (not read back yet)";
    @TempDir
    Path work;

    @Test
    void shouldAnswerReady503UntilThePartitionsLeaseIsReadBack() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("read-back"), topics, "r1")
                .with("admin.port", "0")
                .withJvmArg("-Dsnowstamp.test.hold-confirmations=0:0:" + HOLD_SECONDS);
        try (ChildJvm child = stamper.start()) {
            String adminUrl = child.adminUrl();
            List<String> reasons = new ArrayList<>();
            long firstWait = 0;
            long lastWait = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            Http.Response ready;
            while ((ready = Http.get(adminUrl + "/health/ready")).status() != 200 && System.nanoTime() < deadline) {
                if (ready.status() == 503) {
                    String reason = ready.json().path("reason").asText();
                    reasons.add(reason);
                    if (reason.equals(NOT_READ_BACK)) {
                        lastWait = System.nanoTime();
                        firstWait = firstWait == 0 ? lastWait : firstWait;
                    }
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
            assertThat(ready.status()).as("ready once the hold ended: %s\n%s", ready, child.logs()).isEqualTo(200);
            assertThat(child.logs()).as("the hold took effect").contains("confirming nothing for changelog partition 0 for");
            assertThat(reasons).as("503 naming partition 0 alone while its lease was not read back").contains(NOT_READ_BACK);
            System.out.println("not ready while partition 0's lease was not read back for "
                    + TimeUnit.NANOSECONDS.toMillis(lastWait - firstWait) + " ms of the " + HOLD_SECONDS + " s hold");
        }
    }
}
