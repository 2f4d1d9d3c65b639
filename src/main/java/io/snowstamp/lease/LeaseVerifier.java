package io.snowstamp.lease;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Takes each task's lease in its changelog and reads the changelog back, so that a task issues IDs only while no newer
 * lease can have been taken (the argument: {@link PartitionLease}, and design.md, "The ownership lease"). One daemon
 * thread per stamper instance, with its own clients ({@link LeaseClients}):
 * <ul>
 *   <li>a producer that writes a task's lease record at its start, straight to the changelog (acks=all), not through
 *       Kafka Streams' cache, which would hold it until the task's first commit;</li>
 *   <li>every {@link RoundPacing#PERIOD}: the changelog topics' IDs ({@link ChangelogIdentity}) and the committed end of every
 *       changelog partition held here (each partition answered on its own, so a frozen broker delays only the ones it
 *       leads: {@link CommittedEnds}), then a consumer ({@code read_committed}, no group) reads each partition up to that
 *       end, from the start for a newly taken lease, and confirms or revokes each lease.</li>
 * </ul>
 *
 * <p>Nothing here depends on the group coordinator: a stamper cut off from it (and so evicted, its
 * partitions given to another instance) still reads the new owner's lease from the changelog and
 * stops; one cut off from the changelog's leaders gets no confirmation and stops when its term runs out;
 * a frozen one wakes up with its term run out. Thread-safe.
 */
public final class LeaseVerifier implements Leases, AutoCloseable {
    /** The longest its close waits for its reader thread, and for each of its three clients: a clean stop's worst case counts them. */
    public static final Duration THREAD_STOP_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration CLIENT_CLOSE_TIMEOUT = Duration.ofSeconds(2);
    private static final Logger log = LoggerFactory.getLogger(LeaseVerifier.class);
    /** How long a confirmation lets a task issue, from the moment its request was sent. */
    public static final Duration TERM = Duration.ofMillis(1500);
    /** The shortest time between two rounds' sends while a task waits for one ({@link LeaseGuard#hurry}): not back to back. */
    static final Duration HURRIED_GAP = Duration.ofMillis(25);
    /**
     * A new lease waits out the term, stretched by 5 % for monotonic clocks that run at different rates: each host's within
     * 2 % of real time makes two of them differ by up to 1.02 / 0.98 = 4.1 % (design.md, "What it rests on").
     */
    static final long TAKEOVER_WAIT_NANOS = TERM.toNanos() + TERM.toNanos() / 20;
    private static final long READ_DEADLINE_NANOS = TERM.toNanos() / 2;
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Admin admin;
    private final Consumer<byte[], byte[]> consumer;
    private final Producer<byte[], byte[]> producer;
    private final Map<String, LeaseCodec> codecs;
    private final Map<TopicPartition, Held> held = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> restoreEnds = new ConcurrentHashMap<>();
    /** The highest epoch read in each partition, kept after its lease goes: the next lease there takes one above it. */
    private final Map<TopicPartition, Long> highestEpochs = new ConcurrentHashMap<>();
    private final Thread thread;
    /** A fault test's withheld confirmations (null: none, always outside tests). */
    private final ConfirmationHold hold = ConfirmationHold.fromProperty();
    private volatile boolean running = true;
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicLong takeoverParks = new AtomicLong();
    /** A task waits for a write of its own to be read back: the next round starts {@link #HURRIED_GAP} after the last. */
    private final AtomicBoolean hurried = new AtomicBoolean();

    /** The last round: partitions not read to their committed end in time, how long it took (send to read). */
    private volatile int lastBehind;
    private volatile long lastRoundNanos;

    /**
     * How far the reader is behind, at one moment: leases held, partitions the last round could not read to their end,
     * how long that round took, and the longest time since a held lease was last confirmed (since it was taken, while
     * never confirmed). Above {@link #TERM} a partition's next ID waits for the reader.
     */
    public record ReaderLag(int held, int behind, long roundNanos, long oldestConfirmationNanos) {
        public static final ReaderLag NONE = new ReaderLag(0, 0, 0, 0);
    }

    /** A lease this instance holds, and when its task took it ({@link System#nanoTime()}). */
    private record Held(PartitionLease lease, long takenAt) { }

    // verifier thread only
    private final Map<TopicPartition, PartitionLease> readFor = new HashMap<>();
    private final ChangelogIdentity identity = new ChangelogIdentity();
    private long lastWarn = System.nanoTime() - WARN_EVERY_NANOS;

    /**
     * @param client connection settings for the admin client; {@code consumer}: a group-less byte-array consumer's
     *               ({@code read_committed} forced); {@code producer}: a byte-array producer's (acks=all)
     * @param codecs changelog topic -> how its records name their lease
     */
    public LeaseVerifier(Properties client, Properties consumer, Properties producer, Map<String, LeaseCodec> codecs, String clientId) {
        this(LeaseClients.open(client, consumer, producer, clientId), codecs);
    }

    /** Over clients already made: a test's, which answer as a broker would without one. */
    LeaseVerifier(LeaseClients clients, Map<String, LeaseCodec> codecs) {
        this.codecs = Map.copyOf(codecs);
        this.admin = clients.admin();
        this.consumer = clients.consumer();
        this.producer = clients.producer();
        this.thread = new Thread(this::run, "snowstamp-lease");
        thread.setDaemon(true);
        thread.start();
    }

    /** The restore of {@code changelog} reads up to {@code endingOffset} (exclusive): told by the restore listener. */
    public void restoreStarted(TopicPartition changelog, long endingOffset) {
        restoreEnds.put(changelog, endingOffset);
    }

    @Override
    public LeaseGuard take(TaskId task, TopicPartition changelog, LeaseMark mine, byte[] key, byte[] value, String name,
                           boolean restoreAgain) {
        if (!codecs.containsKey(changelog.topic())) {
            throw new IllegalArgumentException("no lease codec for " + changelog.topic());
        }
        Long restoreEnd = restoreEnds.get(changelog);
        if (restoreEnd == null) {
            log.warn("{}: the restore of {} was not reported; {}", name, changelog, restoreAgain
                    ? "only writes after this task's own lease record are checked"
                    : "every record before this task's own lease record counts as read after the restore");
        }
        long checkFrom = !restoreAgain ? PartitionLease.NO_RESTORE_CHECK
                : restoreEnd == null ? PartitionLease.RESTORE_END_UNKNOWN : restoreEnd;
        PartitionLease lease = new PartitionLease(changelog.partition(), mine, checkFrom, restoreEnd == null ? 0 : restoreEnd,
                TERM.toNanos(), TAKEOVER_WAIT_NANOS);
        producer.send(new ProducerRecord<>(changelog.topic(), changelog.partition(), key, value), (metadata, error) -> {
            if (error != null) {
                log.warn("{}: the lease record could not be written to {}: {}; the task waits, then gives the partition back",
                        name, changelog, error.getMessage());
            } else {
                // written: the next round can confirm it (the round the take itself woke may have asked before the write)
                LockSupport.unpark(thread);
            }
        });
        Held entry = new Held(lease, System.nanoTime());
        held.put(changelog, entry);
        LockSupport.unpark(thread);
        return new LeaseGuard(lease, task, name, () -> held.remove(changelog, entry), takeoverParks::incrementAndGet,
                this::hurry, entry.takenAt(), Ticker.SYSTEM);
    }

    @Override
    public long highestEpoch(TopicPartition changelog) {
        return highestEpochs.getOrDefault(changelog, -1L);
    }

    /**
     * Whether the task holding {@code changelog}'s lease here would wait now before its first ID: it took the lease
     * less than {@link LeaseGuard#MAX_WAIT_NANOS} ago and is still waiting out the previous owner's term. Its input may
     * stay away from the stream thread meanwhile, so that the thread does not park in {@link LeaseGuard#check} with a
     * transaction open for the tasks that are running. False for a partition without a lease here. Any thread.
     */
    public boolean awaitingTakeover(TopicPartition changelog) {
        Held entry = held.get(changelog);
        return entry != null && System.nanoTime() - entry.takenAt() < LeaseGuard.MAX_WAIT_NANOS
                && entry.lease().awaitingTakeover();
    }

    private void hurry() {
        if (!hurried.getAndSet(true)) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        while (running) {
            hurried.set(false);
            long send = System.nanoTime();
            try {
                verifyOnce(send);
            } catch (WakeupException e) {
                break;
            } catch (RuntimeException e) {
                warn("cannot read the changelog back to confirm the leases ({}); retrying", e.getMessage());
            }
            awaitNextRound(send);
        }
    }

    /**
     * Parks until the next round is due ({@link RoundPacing#pause}), or {@link #HURRIED_GAP} after {@code send} once a task waits for
     * one. An unpark for a lease record just written ends it at once (it is not hurried: the loop would park again).
     */
    private void awaitNextRound(long send) {
        while (running) {
            long now = System.nanoTime();
            boolean hurry = hurried.get();
            long rest = RoundPacing.pause(send, now, RoundPacing.earliestTakeoverDue(readFor.values()));
            if (hurry) {
                rest = Math.min(rest, HURRIED_GAP.toNanos() - (now - send));
            }
            if (rest <= 0) {
                return;
            }
            LockSupport.parkNanos(rest);
            if (!hurry && !hurried.get()) {
                return;     // the period is over, or a lease record was written: a round now
            }
        }
    }

    /** One verification: the committed end of every held partition, asked at {@code send}, then the changelog up to it. */
    private void verifyOnce(long send) {
        Map<TopicPartition, PartitionLease> leases = new HashMap<>();
        held.forEach((tp, entry) -> leases.put(tp, entry.lease()));
        if (leases.isEmpty()) {
            follow(leases);
            lastBehind = 0;
            lastRoundNanos = 0;
            return;
        }
        long deadline = send + READ_DEADLINE_NANOS;
        DescribeTopicsResult ids = ChangelogIdentity.ask(admin, leases.keySet());     // asked beside the ends, not before
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = CommittedEnds.read(admin, leases.keySet(), deadline);
        long endsAt = System.nanoTime();
        int holding = leases.size();
        // a new lease is read only once its topic's ID is noted (its reading starts in the topic it is checked against);
        // the others' IDs are waited for after the reads, so that a slow answer does not eat every partition's read time
        Map<TopicPartition, ChangelogIdentity.Seen> seen = identity.anyNew(leases) ? settle(ids, leases, deadline) : null;
        ends.keySet().retainAll(leases.keySet());
        follow(leases);
        Set<TopicPartition> behind = new HashSet<>(ends.keySet());
        behind.removeIf(tp -> reached(tp, ends.get(tp).offset()));
        while (!behind.isEmpty() && System.nanoTime() - deadline < 0) {
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(20))) {
                readBack(record);
            }
            behind.removeIf(tp -> reached(tp, ends.get(tp).offset()));
        }
        seen = seen != null ? seen : settle(ids, leases, deadline);
        long received = System.nanoTime();
        // a leader that did not answer counts as behind too: its partitions were not read this round
        lastBehind = behind.size() + holding - ends.size();
        lastRoundNanos = received - send;
        rounds.incrementAndGet();
        if (log.isDebugEnabled()) {     // where a slow start spends its time: SNOWSTAMP_LOG_LEVEL=DEBUG
            log.debug("lease round: {} held, {} ends in {} ms, read in {} ms, {} behind", holding, ends.size(),
                    TimeUnit.NANOSECONDS.toMillis(endsAt - send), TimeUnit.NANOSECONDS.toMillis(received - endsAt), behind.size());
        }
        int unanswered = 0;
        for (TopicPartition tp : ends.keySet()) {
            String other = identity.ended(tp, ends.get(tp));
            if (other != null) {
                replaced(tp, other);
            } else if (seen.get(tp) == ChangelogIdentity.Seen.UNANSWERED) {
                unanswered++;
            } else if (!behind.contains(tp) && (hold == null || !hold.holds(tp.partition()))) {
                readFor.get(tp).confirmed(send, received, ends.get(tp).offset());
            }
        }
        if (!behind.isEmpty() || unanswered > 0) {
            warn("the changelog could not be read up to its end in time for {} partition(s), e.g. {}, and its topic ID was not"
                    + " answered for {}", behind.size(), behind.isEmpty() ? "none" : behind.iterator().next(), unanswered);
        }
    }

    /** The topic IDs asked this round: a lease in another topic is lost, a new one not answered is not read (this round). */
    private Map<TopicPartition, ChangelogIdentity.Seen> settle(DescribeTopicsResult ids, Map<TopicPartition, PartitionLease> leases,
                                                               long deadline) {
        Map<TopicPartition, ChangelogIdentity.Seen> seen = identity.check(ids, leases, deadline);
        seen.forEach((tp, what) -> {
            if (what == ChangelogIdentity.Seen.REPLACED) {
                replaced(tp, "another topic ID");
            }
            if (what == ChangelogIdentity.Seen.REPLACED
                    || what == ChangelogIdentity.Seen.UNANSWERED && readFor.get(tp) != leases.get(tp)) {
                leases.remove(tp);
            }
        });
        return seen;
    }

    private void replaced(TopicPartition tp, String why) {
        held.computeIfPresent(tp, (key, entry) -> {
            entry.lease().replaced("whoever holds it in a changelog cut or created again (" + why + ")");
            return entry;
        });
    }

    /** One changelog record read back, for the lease held on its partition. */
    private void readBack(ConsumerRecord<byte[], byte[]> record) {
        TopicPartition tp = new TopicPartition(record.topic(), record.partition());
        PartitionLease lease = readFor.get(tp);
        String other = identity.read(tp, record.offset());
        if (lease == null || other != null) {
            if (other != null) {
                replaced(tp, other);
            }
            return;
        }
        LeaseRecord read = LeaseRecord.read(codecs.get(record.topic()), record);
        if (read.unreadable() != null) {
            warn("a record of {} at offset {} names no readable lease ({}): counted as another writer's (after this task's own"
                    + " lease record: a newer build's, which holds the partition now)", tp, record.offset(), read.unreadable());
            lease.unreadable(record.offset());
        }
        lease.observe(record.offset(), read.mark(), read.covered(), read.counter(), read.writer());
        if (read.mark() != null) {
            highestEpochs.merge(tp, read.mark().epoch(), Math::max);
        }
    }

    /** Points the consumer at the held partitions: from the start for a lease it has not read for yet. */
    private void follow(Map<TopicPartition, PartitionLease> leases) {
        Set<TopicPartition> fresh = new HashSet<>();
        leases.forEach((tp, lease) -> {
            if (readFor.get(tp) != lease) {
                fresh.add(tp);
            }
        });
        if (fresh.isEmpty() && readFor.keySet().equals(leases.keySet())) {
            return;
        }
        readFor.clear();
        readFor.putAll(leases);
        consumer.assign(leases.keySet());
        identity.follow(leases.keySet(), fresh);
        if (!fresh.isEmpty()) {
            consumer.seekToBeginning(fresh);
        }
    }

    /** The reader's lag now (metrics, {@code /state}). Any thread. */
    public ReaderLag lag() {
        long now = System.nanoTime();
        long oldest = 0;
        for (Held entry : held.values()) {
            long since = entry.lease().sinceConfirmed(now);
            oldest = Math.max(oldest, since >= 0 ? since : now - entry.takenAt());
        }
        int holding = held.size();
        return holding == 0 ? ReaderLag.NONE : new ReaderLag(holding, lastBehind, lastRoundNanos, oldest);
    }

    /** Verifications completed so far (tests: rounds read for all leases, not per lease). */
    public long rounds() {
        return rounds.get();
    }

    /** Times a stream thread waited in a task's first check for the previous owner's term (tests: it should not). */
    public long takeoverParks() {
        return takeoverParks.get();
    }

    /** Whether {@code tp} was read up to its committed {@code end} (a fetch may have read past it: records came since). */
    private boolean reached(TopicPartition tp, long end) {
        try {
            long position = consumer.position(tp, Duration.ofMillis(50));
            String other = identity.positioned(tp, position);
            if (other != null) {
                replaced(tp, other);
            }
            return position >= end;
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            return false;
        }
    }

    private void warn(String format, Object... args) {
        long now = System.nanoTime();
        if (now - lastWarn >= WARN_EVERY_NANOS) {
            lastWarn = now;
            log.warn(format, args);
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        LockSupport.unpark(thread);
        try {
            thread.join(THREAD_STOP_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(CLIENT_CLOSE_TIMEOUT);
        admin.close(CLIENT_CLOSE_TIMEOUT);
        if (!thread.isAlive()) {
            consumer.close(CLIENT_CLOSE_TIMEOUT);
        }
    }
}
