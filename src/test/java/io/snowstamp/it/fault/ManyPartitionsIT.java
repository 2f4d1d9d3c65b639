package io.snowstamp.it.fault;

import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One stamper instance holding many partitions (64 by default; {@code -Dsnowstamp.many.partitions=N}):
 * every partition stamps, then the stamper is SIGKILLed while a producer writes to every partition,
 * restarted on the same state directory, and for EACH partition the resume decision must have been
 * right: every ID the restarted stamper issued there is above every ID the killed one wrote there —
 * read with {@code read_uncommitted}, so IDs of its open, never-committed transaction count too —
 * every ID belongs to the partition's worker, and {@code verify} finds no duplicate, no decrease and
 * nothing missing.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(240)
class ManyPartitionsIT extends OnSharedBroker {
    private static final int PARTITIONS = Integer.getInteger("snowstamp.many.partitions", 64);
    private static final int RATE = 500;
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");

    @TempDir
    Path work;

    @Test
    void shouldStampEveryPartitionAndResumeEachAboveItsIdsAfterSigkill() throws Exception {
        Timeline timeline = new Timeline("many-partitions");
        String servers = broker.bootstrapServers();
        Stamper.Topics topics = Stamper.Topics.create(servers, PARTITIONS);
        Stamper spec = Stamper.of(work, servers, TestBroker.unique("app"), topics, "many-1");

        Map<Integer, Long> killedAt;
        long produced;
        try (NumberedProducer producer = new NumberedProducer(servers, topics.in(), 0, 500_000, RATE, Duration.ofMinutes(2))
                .spreadOver(PARTITIONS).start();
             TopicEnds ends = new TopicEnds(servers)) {
            // closed (killed if still alive) whatever happens: a failed assertion must not leave it running beside the next tests
            try (ChildJvm first = spec.start()) {
                timeline.mark("started on %d partitions", PARTITIONS);
                assertThat(ends.awaitEveryPartitionCommitted(topics.out(), 3, Duration.ofSeconds(120)))
                        .as("every partition stamps\n%s", first.logs()).isTrue();
                timeline.mark("every partition stamped");
                first.kill();
            }
            killedAt = ends.perPartition(topics.out());     // log end: the killed stamper wrote nothing after it
            Map<Integer, Long> committedAtKill = ends.committedPerPartition(topics.out());
            timeline.mark("SIGKILL; output log end %d records", killedAt.values().stream().mapToLong(Long::longValue).sum());

            try (ChildJvm second = spec.start()) {      // same state directory and instance id
                assertThat(ends.awaitEveryPartitionGrown(topics.out(), committedAtKill, 3, Duration.ofSeconds(120)))
                        .as("every partition stamps again after the restart\n%s", second.logs()).isTrue();
                timeline.mark("every partition stamped again");
                produced = producer.stop();
                Verification verify = Verification.await(servers, topics.out(), topics.in(),
                        v -> v.records() >= produced && v.missing() == 0, Duration.ofSeconds(120));
                timeline.mark("verified: %s", verify.summaryLine());
                assertThat(verify.summaryLine()).as("%s\n%s", verify, second.logs()).isEqualTo(Verification.clean(produced));
                assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
            }
        }

        // per partition: the killed stamper's highest ID (committed or not) against the restarted one's lowest
        Map<Integer, Long> highestBefore = new HashMap<>();
        Map<Integer, Long> lowestAfter = new HashMap<>();
        Properties uncommitted = StampedRecords.committedReader(servers);
        uncommitted.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        TopicReader.readToEnd(uncommitted, topics.out(), Duration.ofSeconds(60), record -> {
            Header header = record.headers().lastHeader(IdHeader.ID);
            long id = Long.parseLong(new String(header.value(), StandardCharsets.US_ASCII));
            assertThat(LAYOUT.decode(id).worker()).as("worker of ID %d in partition %d", id, record.partition())
                    .isEqualTo(record.partition());
            if (record.offset() < killedAt.get(record.partition())) {
                highestBefore.merge(record.partition(), id, Math::max);
            } else {
                lowestAfter.merge(record.partition(), id, Math::min);
            }
        });
        assertThat(highestBefore).hasSize(PARTITIONS);
        assertThat(lowestAfter).hasSize(PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(lowestAfter.get(p)).as("partition %d: first ID after the restart vs. highest ID before the SIGKILL", p)
                    .isGreaterThan(highestBefore.get(p));
        }
        timeline.mark("each of %d partitions resumed above its IDs; produced %d", PARTITIONS, produced);
    }
}
