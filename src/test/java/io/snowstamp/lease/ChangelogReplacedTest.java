package io.snowstamp.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

/**
 * A holder whose reader did not fetch while its changelog topic was deleted, created again and written past the holder's
 * position (a frozen or cut-off holder: the zombie case) reads on in the new log from its old position, and finds there
 * only a holder of a lower epoch (the new log's epochs start again at 1). Only the topic's ID tells that the log is
 * another: the lease is lost. The real broker's side of the same: {@code ChangelogRecreatedIT}.
 */
class ChangelogReplacedTest {
    private static final String CHANGELOG = "app-worker-state-changelog";
    private static final TopicPartition TP = new TopicPartition(CHANGELOG, 0);
    private static final LeaseCodec CODEC = (key, value) -> {
        String[] parts = new String(value, StandardCharsets.UTF_8).split("/", 2);
        return new LeaseMark(Long.parseLong(parts[0]), parts[1]);
    };

    /**
     * A changelog's state as the admin client answers it: its topic ID (null: no such topic), its partition's committed
     * end and the leader epoch that end is answered in.
     */
    private record Log(Uuid id, long end, int leaderEpoch) {
        Log(Uuid id, long end) {
            this(id, end, 3);
        }
    }

    private static Admin answering(AtomicReference<Log> log) {
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
            Log now = log.get();
            return switch (method.getName()) {
                case "describeTopics" -> ChangelogIdentityTest.describing(java.util.Collections.singletonMap(CHANGELOG, now.id()));
                case "listOffsets" -> {
                    Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> answers = new HashMap<>();
                    answers.put(TP, KafkaFuture.completedFuture(new ListOffsetsResult.ListOffsetsResultInfo(now.end(), -1, Optional.of(now.leaderEpoch()))));
                    yield new ListOffsetsResult(answers);
                }
                case "close" -> null;
                default -> throw new UnsupportedOperationException(method.getName());
            };
        });
    }

    private static ConsumerRecord<byte[], byte[]> lease(long offset, long epoch, String holder) {
        return new ConsumerRecord<>(CHANGELOG, 0, offset, new byte[0], (epoch + "/" + holder).getBytes(StandardCharsets.UTF_8));
    }

    private static LeaseVerifier verifier(AtomicReference<Log> log, MockConsumer<byte[], byte[]> reader) {
        reader.updateBeginningOffsets(Map.of(TP, 0L));
        return new LeaseVerifier(new LeaseClients(answering(log), reader,
                new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer())), Map.of(CHANGELOG, CODEC));
    }

    /** A holder of epoch 5 whose lease record is the log's offset 0, confirmed. */
    private static LeaseGuard confirmedHolder(LeaseVerifier verifier, MockConsumer<byte[], byte[]> reader) throws InterruptedException {
        LeaseGuard guard = verifier.take(new TaskId(0, 0), TP, new LeaseMark(5, "old"), new byte[0], new byte[0], "0_0", false);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!reader.assignment().contains(TP) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        reader.addRecord(lease(0, 5, "old"));
        assertThat(guard.check()).as("confirmed after the takeover wait").isTrue();
        return guard;
    }

    @Test
    void shouldLoseALeaseWhoseChangelogWasCreatedAgainAndWrittenPastItsPositionUnseen() throws Exception {
        AtomicReference<Log> log = new AtomicReference<>(new Log(Uuid.randomUuid(), 1));
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
        try (LeaseVerifier verifier = verifier(log, reader)) {
            LeaseGuard guard = confirmedHolder(verifier, reader);

            // unseen by the reader: the topic deleted, created again, and written past offset 1 by a holder of epoch 1
            log.set(new Log(Uuid.randomUuid(), 3));
            reader.addRecord(lease(1, 1, "new"));
            reader.addRecord(lease(2, 1, "new"));

            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!guard.lost() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(guard.lost()).as("the log it reads on in is another topic").isTrue();
        }
    }

    @Test
    void shouldLoseALeaseWhoseChangelogHandsOutAnOffsetAgain() throws Exception {
        Uuid id = Uuid.randomUuid();
        AtomicReference<Log> log = new AtomicReference<>(new Log(id, 1));
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
        try (LeaseVerifier verifier = verifier(log, reader)) {
            LeaseGuard guard = confirmedHolder(verifier, reader);

            // the log cut back (an unclean leader election), or created again where the topic ID did not tell: the
            // reader's position out of range, reset to the start, and offset 0 is another record now
            log.set(new Log(id, 2));
            reader.seek(TP, 0);
            reader.addRecord(lease(0, 1, "new"));
            reader.addRecord(lease(1, 1, "new"));

            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!guard.lost() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(guard.lost()).as("offset 0 read twice: not the log the lease was read in").isTrue();
        }
    }

    private static boolean awaitLost(LeaseGuard guard) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!guard.lost() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return guard.lost();
    }

    @Test
    void shouldNotConfirmALeaseWhoseTopicIdIsNotAnswered() throws Exception {
        Uuid id = Uuid.randomUuid();
        AtomicReference<Log> log = new AtomicReference<>(new Log(id, 1));
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
        try (LeaseVerifier verifier = verifier(log, reader)) {
            LeaseGuard guard = confirmedHolder(verifier, reader);
            log.set(new Log(null, 1));      // deleted, or a broker that does not know the topic (yet, or any more)
            Thread.sleep(LeaseVerifier.TERM.toMillis() + 500);
            assertThat(guard.mustWait(-1)).as("no confirmation for a term: its next ID waits").isTrue();
            assertThat(guard.lost()).isFalse();
            log.set(new Log(id, 1));
            Thread.sleep(RoundPacing.PERIOD.toMillis() * 3);
            assertThat(guard.mustWait(-1)).as("confirmed again once the same topic answers").isFalse();
        }
    }

    @Test
    void shouldConfirmAReadThatWentPastTheCommittedEndAskedBeforeIt() throws Exception {
        AtomicReference<Log> log = new AtomicReference<>(new Log(Uuid.randomUuid(), 1));
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
        try (LeaseVerifier verifier = verifier(log, reader)) {
            LeaseGuard guard = confirmedHolder(verifier, reader);
            // a record more (end 2), and two that came after the round asked that end: the fetch reads past it
            log.set(new Log(log.get().id(), 2));
            reader.addRecord(lease(1, 5, "old"));
            reader.addRecord(lease(2, 5, "old"));
            reader.addRecord(lease(3, 5, "old"));
            Thread.sleep(LeaseVerifier.TERM.toMillis() + 500);
            assertThat(guard.mustWait(-1)).as("read to the end it asked, and past it: confirmed").isFalse();
        }
    }

    @Test
    void shouldLoseALeaseWhoseCommittedEndOrLeaderEpochMovesDown() throws Exception {
        for (Log down : java.util.List.of(new Log(null, 0, 3), new Log(null, 1, 2))) {
            AtomicReference<Log> log = new AtomicReference<>(new Log(Uuid.randomUuid(), 1, 3));
            MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
            try (LeaseVerifier verifier = verifier(log, reader)) {
                LeaseGuard guard = confirmedHolder(verifier, reader);
                log.set(new Log(log.get().id(), down.end(), down.leaderEpoch()));
                assertThat(awaitLost(guard)).as("end %d in leader epoch %d", down.end(), down.leaderEpoch()).isTrue();
            }
        }
    }

    @Test
    void shouldLoseALeaseWhoseReaderIsResetToAnEmptyLogsStart() throws Exception {
        Uuid id = Uuid.randomUuid();
        AtomicReference<Log> log = new AtomicReference<>(new Log(id, 1));
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest");
        try (LeaseVerifier verifier = verifier(log, reader)) {
            LeaseGuard guard = confirmedHolder(verifier, reader);
            // out of range, reset to the start of another log with nothing read from it yet: no record read twice, and
            // (here) the same ID and end answered
            reader.seek(TP, 0);
            assertThat(awaitLost(guard)).as("its position moved down without a seek of the reader's own").isTrue();
        }
    }
}
