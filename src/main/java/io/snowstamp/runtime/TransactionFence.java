package io.snowstamp.runtime;

import io.snowstamp.ownership.PredecessorFence;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link PredecessorFence} through the Admin API (KIP-664 list/describe transactions, KIP-618
 * fence producers; brokers 3.3 and later): lists the application's ongoing transactions
 * (transactional ids {@code <application.id>-...}, Kafka Streams' exactly-once producers),
 * describes them, and fences those that hold the task's output partition. Fencing bumps the
 * producer's epoch, which makes the transaction coordinator abort the open transaction at once.
 *
 * <p>Sound because a task starts only after its partition left its previous owner: in a
 * cooperative rebalance the previous owner commits and closes the task before the partition is
 * assigned elsewhere, so an open transaction on the partition at this point belongs to an owner
 * that was evicted, dead or frozen. Fencing a frozen one is what exactly-once wants anyway (it
 * rejoins the group when it resumes). The task's own producer cannot hold the partition yet: the
 * fence runs before its first record. Needs Describe and Write on the transactional ids
 * ({@code --resource-pattern-type prefixed --transactional-id APP-}, see the README).
 *
 * <p>Best effort: an error (old broker, missing ACL, timeout) is logged once and the task starts
 * anyway; the broker then aborts the transaction when it times out. Thread-safe.
 */
final class TransactionFence implements PredecessorFence, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransactionFence.class);

    private final Admin admin;
    private final String outputTopic;
    private final String transactionalIdPrefix;
    private final long timeoutMillis;
    private volatile boolean warned;
    /** The application's ongoing transactions and when they were listed (see {@link #ongoing}); guarded by this. */
    private Map<String, TransactionDescription> ongoing;
    private long listedAt;

    TransactionFence(Properties clientProps, String applicationId, String outputTopic, Duration timeout) {
        this.admin = Admin.create(clientProps);
        this.outputTopic = outputTopic;
        this.transactionalIdPrefix = applicationId + "-";
        this.timeoutMillis = timeout.toMillis();
    }

    @Override
    public void fenceOpenTransactions(int partition) {
        fenceOpenTransactions(Set.of(partition));
    }

    /**
     * Fences every other producer with an open transaction on any of the output {@code partitions}:
     * one describe of the candidates and one fence request for all of them, whatever their number
     * (the start of many tasks in one go, {@link io.snowstamp.resume.TailPrefetch}). Every partition
     * must already be this instance's.
     */
    synchronized void fenceOpenTransactions(Set<Integer> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        Set<TopicPartition> outputs = new HashSet<>();
        partitions.forEach(partition -> outputs.add(new TopicPartition(outputTopic, partition)));
        fenceHolders(outputs);
    }

    /**
     * Fences every other producer with an open transaction on {@code changelog}, when Kafka Streams
     * starts restoring it (the restore listener): earlier than the task's own fence, and that matters.
     * Before a restored task runs, Kafka Streams fetches its input partition's committed offset, and
     * the broker answers that fetch only once no transaction holds an offset commit for the partition
     * pending: a dead owner's open transaction made the new owner wait until the broker aborted it,
     * {@code transaction.timeout.ms} after it began. That transaction holds the task's changelog partition
     * when it wrote state, and otherwise its output partition (Kafka Streams flushes a task's records before
     * it sends the task's offsets; changelog partition p and output partition p belong to the same task in
     * both modes): both are fenced, or a transaction of records only would still hold the start
     * ({@code FrozenAfterOffsetsIT}). The partitions are this instance's already (Kafka Streams restores
     * assigned tasks only), so the argument of the class holds here too.
     */
    synchronized void fenceHoldersOf(TopicPartition changelog) {
        fenceHolders(Set.of(changelog, new TopicPartition(outputTopic, changelog.partition())));
    }

    private void fenceHolders(Set<TopicPartition> partitions) {
        long started = System.nanoTime();
        try {
            List<String> candidates = holders(ongoing(started), partitions);
            if (candidates.isEmpty()) {
                return;
            }
            // described again now: a snapshot a second old may show a transaction that has ended since (this instance's own
            // included, from before a task moved between its threads), and fencing that id would fence a live producer
            Map<String, TransactionDescription> now = admin.describeTransactions(candidates).all().get(timeoutMillis, TimeUnit.MILLISECONDS);
            ongoing.putAll(now);
            List<String> holders = holders(now, partitions);
            if (holders.isEmpty()) {
                return;
            }
            admin.fenceProducers(holders).all().get(timeoutMillis, TimeUnit.MILLISECONDS);
            List<TopicPartition> held = holders.stream().flatMap(id -> now.get(id).topicPartitions().stream())
                    .filter(partitions::contains).distinct()
                    .sorted(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition)).toList();
            holders.forEach(ongoing::remove);       // aborted now: later tasks need not fence them again
            log.atInfo().addKeyValue("event", "predecessor-fenced").addKeyValue("partitions", held.size())
                    .log("fenced {} (open transactions of a previous owner on {}) in {} ms: their records are"
                            + " aborted now, not when the broker times the transactions out", holders, held,
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // a WARN once (an old broker or a missing ACL fails every time); each later failure at INFO, so that a slow
            // failover under load (a timeout here) can still be told from a fence that found nothing
            boolean first = !warned;
            warned = true;
            log.atLevel(first ? org.slf4j.event.Level.WARN : org.slf4j.event.Level.INFO).log("{}: cannot check for a previous"
                    + " owner's open transaction ({}); if one is open, the broker aborts it after transaction.timeout.ms and"
                    + " read_committed consumers wait until then{}", partitions, reason(e), first ? " (later ones at INFO)" : "");
        }
    }

    /** Why the check failed, for people: a timeout carries no message of its own, so it is named here with its setting. */
    private String reason(Exception e) {
        return e instanceof TimeoutException ? "Kafka did not answer within " + timeoutMillis + " ms, recovery.tail-guard-timeout"
                : Errors.oneLine(e);
    }

    /**
     * The application's ongoing transactions, listed and described at most {@link #LIST_TTL_NANOS}
     * ago: the tasks of one assignment start one after another (1,024 of them on one instance), and a
     * list and a describe per task were two admin round trips each. What a snapshot can miss is a
     * transaction begun in its last second — a previous owner keeps no transaction open across the
     * rebalance that moved the partition unless it is a zombie, which exactly-once fences anyway
     * (group generation) — and the fence only shortens a wait: a missed transaction is aborted by the
     * broker after {@code transaction.timeout.ms}.
     */
    private Map<String, TransactionDescription> ongoing(long now) throws Exception {
        if (ongoing == null || now - listedAt > LIST_TTL_NANOS) {
            List<String> ids = admin.listTransactions(new ListTransactionsOptions().filterStates(Set.of(TransactionState.ONGOING)))
                    .all().get(timeoutMillis, TimeUnit.MILLISECONDS).stream()
                    .map(TransactionListing::transactionalId).filter(id -> id.startsWith(transactionalIdPrefix)).toList();
            ongoing = ids.isEmpty() ? new HashMap<>()
                    : new HashMap<>(admin.describeTransactions(ids).all().get(timeoutMillis, TimeUnit.MILLISECONDS));
            listedAt = now;
        }
        return ongoing;
    }

    /** The transactional ids with an ongoing transaction on any of {@code outputs}. */
    private static List<String> holders(Map<String, TransactionDescription> transactions, Set<TopicPartition> outputs) {
        return transactions.entrySet().stream()
                .filter(e -> e.getValue().state() == TransactionState.ONGOING
                        && e.getValue().topicPartitions().stream().anyMatch(outputs::contains))
                .map(Map.Entry::getKey).toList();
    }

    private static final long LIST_TTL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The longest its client's close takes: part of a clean stop's worst case (the Kubernetes grace period counts it). */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    @Override
    public void close() {
        admin.close(CLOSE_TIMEOUT);
    }
}
