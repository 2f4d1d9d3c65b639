package io.snowstamp.it;

import io.snowstamp.id.DecodedId;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Cli;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole job through the real {@code run} command (a child JVM from the shaded jar) against a
 * real broker started separately: 100,000 records produced by a plain Kafka producer, stamped
 * under exactly-once, consumed read_committed, verified record by record.
 */
@Tag("integration")
@Timeout(300)
class RunEndToEndIT extends OnSharedBroker {
    private static final int RECORDS = 100_000;
    @TempDir
    Path work;

    @Test
    void shouldStampEveryRecordOnceUnderExactlyOnce() throws Exception {
        String in = TestBroker.unique("raw");
        String out = TestBroker.unique("stamped");
        String dlq = TestBroker.unique("dlq");
        broker.createTopic(in, 4);
        broker.createTopic(out, 4);
        broker.createTopic(dlq, 1);
        long before = System.currentTimeMillis();
        try (ChildJvm run = ChildJvm.start(work.resolve("logs"), "run", "run",
                "--bootstrap-servers", broker.bootstrapServers(),
                "--application-id", TestBroker.unique("app"),
                "--state-dir", work.resolve("state").toString(),
                "--instance-id", "it-1",
                // the registry off: this test checks the WARN that says nothing checks the offsets then
                "--set", "id.worker-registry=off",
                "--set", "input.topic=" + in, "--set", "output.topic=" + out, "--set", "dlq.topic=" + dlq)) {
            run.awaitOutput("stamping " + in, 60);
            broker.produce(in, 0, RECORDS);

            List<ConsumerRecord<byte[], byte[]>> stamped = broker.consume(out, RECORDS, Duration.ofSeconds(120));
            assertThat(stamped).as(run.logs()).hasSize(RECORDS);
            long after = System.currentTimeMillis();
            IdLayout layout = IdLayout.preset("snowflake");
            for (ConsumerRecord<byte[], byte[]> record : stamped) {
                long id = Long.parseLong(new String(record.headers().lastHeader(IdHeader.ID).value(), StandardCharsets.US_ASCII));
                DecodedId decoded = layout.decode(id);
                assertThat(decoded.worker()).isEqualTo(record.partition());
                assertThat(decoded.wallMillis()).isBetween(before, after + 1_000);
            }

            Cli.Result verify = Cli.run("verify", "--bootstrap-servers", broker.bootstrapServers(),
                    "--topic", out, "--source", in);
            assertThat(verify.lastLine()).as(verify.toString())
                    .isEqualTo("records=" + RECORDS + " duplicates=0 missing=0 extra=0");
            assertThat(verify.exitCode()).isZero();

            int exit = run.terminate(60);
            assertThat(exit).as("a clean stop by SIGTERM exits 0\n" + run.logs()).isZero();
            assertThat(run.logs()).doesNotContain("ERROR");
            // with the worker registry off the stamper says that nothing checks the offsets
            assertThat(run.logs()).contains("WARN").contains("id.worker-registry=off: nothing checks that workers 0..3 (id.worker-offset=0)");
        }
    }
}
