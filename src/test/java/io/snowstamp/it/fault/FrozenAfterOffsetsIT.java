package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Faketime;
import io.snowstamp.testing.LoggedClock;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once, issue 39's item 6: an old owner frozen after the group coordinator accepted its input offsets
 * ({@code sendOffsetsToTransaction} returned) and before its commit, while the partitions' new owner runs 10 s behind
 * (faketime). When the old owner wakes, its commit must not make IDs visible that the new owner issued too.
 *
 * <p>The freeze is forced, not hoped for: the old owner stops itself at that point
 * ({@code -Dsnowstamp.test.freeze-after-offsets=N}, {@code runtime/CommitFreezeHook}). While it is stopped the test reads
 * its open transaction from the broker: it holds the output partitions as well as the offsets — Kafka Streams flushes a
 * task's records before it sends the task's offsets ({@code StreamTask.prepareCommit}) — so the new owner's fence
 * reaches it. The new owner must name it among the transactions it fenced, the old owner is thawed well inside its
 * transaction timeout (its commit is refused), and a read_committed judge ({@code verify}) finds every input stamped once
 * and no ID twice or out of order. The old owner's transaction timeout is 60 s here, not the shipped 20 s: the window
 * in which a woken owner could still commit is then wide enough to thaw it inside on a loaded machine.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(420)
class FrozenAfterOffsetsIT extends OnSharedBroker {
    private static final int PARTITIONS = 4;
    private static final int RATE = 400;
    private static final Duration OLD_OWNERS_TRANSACTION_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path work;

    @BeforeEach
    void requireFaketime() {
        Faketime.assumeAvailable();
    }

    @Test
    void shouldNotCommitIdsTheNewOwnerIssuedWhenAnOwnerFrozenAfterItsOffsetsWakes() throws Exception {
        Timeline timeline = new Timeline("frozen-after-offsets");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        Stamper spec = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "b");
        Stamper behind = spec.withClockOffset("-10s");
        // about 3 s of A's commits (one per 100 ms) after it started stamping its share
        Stamper old = spec.instance("a").withJvmArg("-Dsnowstamp.test.freeze-after-offsets=30")
                .with("kafka.producer.transaction.timeout.ms", String.valueOf(OLD_OWNERS_TRANSACTION_TIMEOUT.toMillis()));

        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), NumberedProducer.UNTIL_STOPPED, RATE).start();
             TopicEnds ends = new TopicEnds(broker.bootstrapServers());
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
             ChildJvm b = behind.launch()) {
            assertClockBehind(b);
            b.awaitLog("taken by b#", 180);
            assertThat(ends.awaitEveryPartitionCommitted(topics.out(), 50, Duration.ofSeconds(120))).as(b.logs()).isTrue();
            timeline.mark("B (clock 10 s behind) stamps every partition");

            try (ChildJvm a = old.start()) {
                a.awaitFrozen(180);
                Instant frozenAt = Instant.now();
                timeline.mark("A stopped itself after its offsets were accepted: %s", lastHookLine(a));

                TransactionDescription open = frozenTransaction(admin, spec.applicationId());
                timeline.mark("A's open transaction %s holds %s", open.producerId(), open.topicPartitions());
                assertThat(open.topicPartitions()).as("the frozen transaction holds the offsets")
                        .anyMatch(p -> p.topic().equals("__consumer_offsets"));
                assertThat(open.topicPartitions()).as("and the output partitions of A's tasks: their records were flushed first")
                        .anyMatch(p -> p.topic().equals(topics.out()));
                String frozenId = transactionalIdOf(admin, spec.applicationId(), open);

                Map<Integer, Long> atFreeze = ends.committedPerPartition(topics.out());
                assertThat(ends.awaitEveryPartitionGrown(topics.out(), atFreeze, 50, Duration.ofSeconds(120)))
                        .as("B stamps A's partitions while A is frozen\n%s", b.logs()).isTrue();
                Duration frozenFor = Duration.between(frozenAt, Instant.now());
                timeline.mark("every partition stamps on B %.1f s after the freeze", frozenFor.toMillis() / 1e3);
                // the abort lets the output grow before B has logged the fence: wait for the line
                b.awaitLog(frozenId, 30);
                assertThat(fencedLine(b, frozenId)).as("B fenced A's open transaction %s\n%s", frozenId, b.logs()).isNotNull();
                timeline.mark("B: %s", fencedLine(b, frozenId));

                assertThat(frozenFor).as("A wakes inside its transaction timeout").isLessThan(OLD_OWNERS_TRANSACTION_TIMEOUT.minusSeconds(10));
                a.thaw();
                a.awaitLog("resumed (SIGCONT)", 30);
                timeline.mark("A resumed (SIGCONT) %.1f s after the freeze", Duration.between(frozenAt, Instant.now()).toMillis() / 1e3);
                Map<Integer, Long> atThaw = ends.committedPerPartition(topics.out());
                assertThat(ends.awaitEveryPartitionGrown(topics.out(), atThaw, 50, Duration.ofSeconds(120)))
                        .as("every partition stamps after A woke\n%s\n%s", a.logs(), b.logs()).isTrue();

                long produced = producer.stop();
                Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, produced);
                timeline.mark("produced %d; verified (read_committed): %s", produced, verify.summaryLine());
                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(produced));
                assertThat(verify.exitCode()).as("no ID out of order\n" + verify).isZero();
                assertThat(a.isAlive()).as(a.logs()).isTrue();
                assertThat(b.isAlive()).as(b.logs()).isTrue();
            }
        }
    }

    /** The hook's own log line: which offsets were pending when A stopped. */
    private static String lastHookLine(ChildJvm a) throws Exception {
        return a.stderr().lines().filter(l -> l.contains("accepted into the open transaction")).reduce((x, y) -> y).orElse("?");
    }

    /**
     * A's frozen transaction: the application's ongoing transaction with A's transaction timeout (B's is the shipped one).
     */
    private static TransactionDescription frozenTransaction(Admin admin, String applicationId) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            for (TransactionDescription d : ongoing(admin, applicationId).values()) {
                if (d.transactionTimeoutMs() == OLD_OWNERS_TRANSACTION_TIMEOUT.toMillis()) {
                    return d;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no open transaction of the application with A's timeout: " + ongoing(admin, applicationId));
            }
            Thread.sleep(200);
        }
    }

    private static Map<String, TransactionDescription> ongoing(Admin admin, String applicationId) throws Exception {
        Set<String> ids = new java.util.TreeSet<>();
        for (TransactionListing listing : admin.listTransactions(new ListTransactionsOptions().filterStates(List.of(TransactionState.ONGOING)))
                .all().get()) {
            if (listing.transactionalId().startsWith(applicationId + "-")) {
                ids.add(listing.transactionalId());
            }
        }
        return ids.isEmpty() ? Map.of() : admin.describeTransactions(ids).all().get();
    }

    private static String transactionalIdOf(Admin admin, String applicationId, TransactionDescription open) throws Exception {
        return ongoing(admin, applicationId).entrySet().stream().filter(e -> e.getValue().producerId() == open.producerId())
                .map(Map.Entry::getKey).findFirst().orElseThrow(() -> new AssertionError("A's transaction is no longer open"));
    }

    /** B's log line saying it fenced {@code transactionalId} (or null). */
    private static String fencedLine(ChildJvm b, String transactionalId) throws Exception {
        return b.stderr().lines().filter(l -> l.contains("fenced") && l.contains(transactionalId)).findFirst().orElse(null);
    }

    /**
     * B's first resume line, read as soon as it appears, shows a clock about 10 s behind the test's: the skew took
     * effect (without it the logged clock would be within a poll of the moment the line was seen).
     */
    private static void assertClockBehind(ChildJvm b) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        List<Instant> clocks = LoggedClock.readings(b.stderr());
        while (clocks.isEmpty()) {
            assertThat(b.isAlive() && System.nanoTime() < deadline).as("B logged no resume line\n%s", b.logs()).isTrue();
            Thread.sleep(50);
            clocks = LoggedClock.readings(b.stderr());
        }
        Instant seenAt = Instant.now();
        assertThat(clocks.get(0)).as("B's clock when it resumed, seen at %s: 10 s behind (faketime)", seenAt)
                .isBefore(seenAt.minusSeconds(8)).isAfter(seenAt.minusSeconds(30));
    }
}
