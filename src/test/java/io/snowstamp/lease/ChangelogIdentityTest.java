package io.snowstamp.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.snowstamp.lease.ChangelogIdentity.Seen;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

/**
 * A lease is read in one incarnation of its changelog topic: another topic ID under the same name later loses it
 * (the new log's holder starts its epochs at 1 and would never count as newer); no answer, or no such topic, only
 * withholds the round's confirmation.
 */
class ChangelogIdentityTest {
    private static final String CHANGELOG = "app-worker-state-changelog";
    private static final TopicPartition TP = new TopicPartition(CHANGELOG, 0);

    /** What an admin client answers for a describe: topic -> ID (null: the topic does not exist). */
    static DescribeTopicsResult describing(Map<String, Uuid> ids) {
        Map<String, KafkaFuture<TopicDescription>> answers = new HashMap<>();
        ids.forEach((topic, id) -> {
            KafkaFutureImpl<TopicDescription> answer = new KafkaFutureImpl<>();
            if (id == null) {
                answer.completeExceptionally(new UnknownTopicOrPartitionException("no such topic"));
            } else {
                answer.complete(new TopicDescription(topic, false, List.of(), Set.of(), id));
            }
            answers.put(topic, answer);
        });
        return new DescribeTopicsResult(null, answers) { };
    }

    private static Admin answering(AtomicReference<Map<String, Uuid>> ids) {
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
            if (method.getName().equals("describeTopics")) {
                Map<String, Uuid> now = ids.get();
                return now == null ? new DescribeTopicsResult(null, Map.of(CHANGELOG, new KafkaFutureImpl<>())) { } : describing(now);
            }
            throw new UnsupportedOperationException(method.getName());
        });
    }

    private static PartitionLease lease() {
        return new PartitionLease(0, new LeaseMark(7, "a/t1"), PartitionLease.NO_RESTORE_CHECK, 1_500, 1_575);
    }

    private static Seen round(ChangelogIdentity ids, Admin admin, PartitionLease lease) {
        return ids.check(ChangelogIdentity.ask(admin, Set.of(TP)), Map.of(TP, lease), System.nanoTime() + 20_000_000).get(TP);
    }

    @Test
    void shouldLoseALeaseWhoseChangelogTopicWasCreatedAgainUnderTheSameName() {
        Uuid first = Uuid.randomUuid();
        AtomicReference<Map<String, Uuid>> answer = new AtomicReference<>(Map.of(CHANGELOG, first));
        Admin admin = answering(answer);
        ChangelogIdentity ids = new ChangelogIdentity();
        PartitionLease lease = lease();

        assertThat(round(ids, admin, lease)).isEqualTo(Seen.NOTED);
        assertThat(round(ids, admin, lease)).isEqualTo(Seen.SAME);
        answer.set(new HashMap<>(java.util.Collections.singletonMap(CHANGELOG, null)));
        assertThat(round(ids, admin, lease)).as("deleted: no confirmation, not yet lost").isEqualTo(Seen.UNANSWERED);
        answer.set(Map.of(CHANGELOG, Uuid.randomUuid()));
        assertThat(round(ids, admin, lease)).isEqualTo(Seen.REPLACED);
        assertThat(round(ids, admin, lease)).as("for good").isEqualTo(Seen.REPLACED);

        PartitionLease next = lease();
        assertThat(round(ids, admin, next)).as("a lease taken in the new topic is read in it").isEqualTo(Seen.NOTED);
        assertThat(round(ids, admin, next)).isEqualTo(Seen.SAME);
    }

    @Test
    void shouldNotNoteANewLeasesTopicBeforeItsIdIsAnswered() {
        AtomicReference<Map<String, Uuid>> answer = new AtomicReference<>(null);
        Admin admin = answering(answer);
        ChangelogIdentity ids = new ChangelogIdentity();
        PartitionLease lease = lease();

        assertThat(round(ids, admin, lease)).isEqualTo(Seen.UNANSWERED);
        answer.set(Map.of(CHANGELOG, Uuid.randomUuid()));
        assertThat(round(ids, admin, lease)).as("noted at its first answer, not compared with nothing").isEqualTo(Seen.NOTED);
    }
}
