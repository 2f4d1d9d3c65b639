package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.FreePort;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The broker goes away under a running stamper and comes back: a real broker in a child JVM
 * ({@code snowstamp broker}, fixed port, own data directory) is stopped with SIGTERM while records
 * are being produced and stamped, and restarted three seconds later on the same port and data.
 * The stamper must reconnect by itself and go on; every record is stamped exactly once.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(480)
class BrokerRestartIT {
    private static final int RATE = 500;

    @TempDir
    Path work;

    @Test
    void shouldReconnectAndStampEveryRecordOnceAcrossABrokerRestart() throws Exception {
        Timeline timeline = new Timeline("broker-restart");
        int port = FreePort.pick();
        Path data = work.resolve("kafka");
        String servers = "127.0.0.1:" + port;
        List<ChildJvm> brokers = new ArrayList<>();
        try {
            brokers.add(startBroker(port, data, "broker-1"));
            timeline.mark("broker up at %s", servers);
            Stamper.Topics topics = Stamper.Topics.create(servers, 4);
            Stamper spec = Stamper.of(work, servers, TestBroker.unique("app"), topics, "s");

            try (ChildJvm stamper = spec.start();
                 NumberedProducer producer = new NumberedProducer(servers, topics.in(), 0, NumberedProducer.UNTIL_STOPPED, RATE, Duration.ofMinutes(3)).start()) {
                long stampedBefore;
                try (TopicEnds ends = new TopicEnds(servers)) {
                    assertThat(ends.awaitAbove(topics.out(), 2_000, Duration.ofSeconds(90))).as(stamper.logs()).isTrue();
                    stampedBefore = ends.total(topics.out());
                }
                assertThat(brokers.get(0).terminate(60)).as(brokers.get(0).logs()).isIn(0, 143);
                timeline.mark("broker stopped with output at %d, %d records acknowledged", stampedBefore, producer.acked());
                Thread.sleep(3_000);
                brokers.add(startBroker(port, data, "broker-2"));
                timeline.mark("broker restarted");

                try (TopicEnds ends = new TopicEnds(servers)) {
                    assertThat(ends.awaitAbove(topics.out(), stampedBefore + 2_000, Duration.ofSeconds(120)))
                            .as("the stamper goes on after the broker restart\n%s", stamper.logs()).isTrue();
                    timeline.mark("stamping again: output at %d", ends.total(topics.out()));
                }
                long produced = producer.stop();
                Verification verify = Verification.await(servers, topics.out(), topics.in(),
                        v -> v.records() >= produced && v.missing() == 0, Duration.ofSeconds(120));
                timeline.mark("produced %d; verified: %s", produced, verify.summaryLine());

                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(produced));
                assertThat(verify.exitCode()).as(verify.toString()).isZero();
                assertThat(stamper.isAlive()).as(stamper.logs()).isTrue();
                assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
            }
        } finally {
            for (ChildJvm broker : brokers) {
                broker.close();
            }
        }
    }

    private static ChildJvm startBroker(int port, Path data, String name) throws Exception {
        // the shipped broker settings: the stamper's shipped session timeout needs nothing more
        List<String> args = new ArrayList<>(List.of("broker", "--port", String.valueOf(port), "--data-dir", data.toString()));
        ChildJvm broker = ChildJvm.start(Stamper.LOGS.resolve("broker-" + port), name, List.of(), Map.of(),
                List.of("-Xmx512m"), args.toArray(String[]::new));
        try {
            broker.awaitOutput("bootstrap.servers=127.0.0.1:" + port, 120);
        } catch (AssertionError | Exception e) {
            broker.close();
            throw e;
        }
        return broker;
    }
}
