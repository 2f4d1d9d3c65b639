package io.snowstamp.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

/**
 * What {@code snowstamp_lease_reader_behind_partitions} and {@code /state}'s {@code leaseReader.behindPartitions} read
 * ({@link LeaseVerifier#lag}): the held partitions the last round could not read up to their committed end. The
 * verifier runs its rounds over fake clients: a changelog whose committed ends lie where the reader cannot reach them.
 */
class LeaseReaderLagTest {
    private static final String CHANGELOG = "app-worker-state-changelog";
    private static final TopicPartition READ = new TopicPartition(CHANGELOG, 0);
    private static final TopicPartition UNREAD = new TopicPartition(CHANGELOG, 1);
    private static final Uuid CHANGELOG_ID = Uuid.randomUuid();

    /** An admin client that answers only the committed ends: nothing written in READ, five records in UNREAD. */
    private static Admin committedEnds(Map<TopicPartition, Long> ends) {
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
            if (method.getName().equals("listOffsets")) {
                Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> answers = new HashMap<>();
                ends.forEach((tp, end) -> answers.put(tp, KafkaFuture.completedFuture(
                        new ListOffsetsResult.ListOffsetsResultInfo(end, -1, Optional.empty()))));
                return new ListOffsetsResult(answers);
            }
            if (method.getName().equals("describeTopics")) {
                return ChangelogIdentityTest.describing(Map.of(CHANGELOG, CHANGELOG_ID));
            }
            if (method.getName().equals("close")) {
                return null;
            }
            throw new UnsupportedOperationException(method.getName());
        });
    }

    @Test
    void shouldCountAHeldPartitionNotReadToItsEndInTheLastRoundAsBehind() throws InterruptedException {
        // the reader's log holds none of UNREAD's five records: no round reads it to its end
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
        reader.updateBeginningOffsets(Map.of(READ, 0L, UNREAD, 0L));
        LeaseClients clients = new LeaseClients(committedEnds(Map.of(READ, 0L, UNREAD, 5L)), reader,
                new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()));
        try (LeaseVerifier verifier = new LeaseVerifier(clients, Map.of(CHANGELOG, (key, value) -> null))) {
            LeaseMark mine = new LeaseMark(1, "a/t1");
            verifier.take(new TaskId(0, 0), READ, mine, new byte[0], new byte[0], "0_0", false);
            verifier.take(new TaskId(0, 1), UNREAD, mine, new byte[0], new byte[0], "0_1", false);
            long roundsBefore = verifier.rounds();
            long deadline = System.nanoTime() + 30_000_000_000L;
            // the round running as the second lease was taken may have held only the first: two more, the last held both
            while (verifier.rounds() < roundsBefore + 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }

            LeaseVerifier.ReaderLag lag = verifier.lag();
            assertThat(lag.held()).isEqualTo(2);
            assertThat(lag.behind()).as("UNREAD, not READ (read to its end, 0)").isEqualTo(1);
        }
    }
}
