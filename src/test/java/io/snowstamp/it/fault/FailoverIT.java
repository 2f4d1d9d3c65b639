package io.snowstamp.it.fault;

import io.snowstamp.id.IdLayout;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.OutputStalls;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Instances die, freeze and restart under a steady load, with the shipped settings (no failover
 * flag): SIGKILL of one of two instances; three SIGKILLs of four instances within 20 s; a process
 * frozen (SIGSTOP, forced from inside {@code process}, in the middle of a batch) past the session
 * timeout and resumed, in both processing modes; a rolling SIGTERM restart of three instances.
 *
 * <p>Each scenario ends in {@code verify} (exactly-once: every record once, nothing else;
 * at-least-once: no ID twice, none missing, IDs increasing in every partition) and prints the
 * longest per-partition output stall it saw (a read_committed consumer tailing the output,
 * {@link OutputStalls}). The goals are a few seconds (failover within 10 s, a rolling restart
 * under 5 s); the assertions allow 30 s, far from them, because this machine is shared.
 * {@code mvn verify -Dit.test=FailoverIT} prints the figures the README's failure table quotes.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: the longest single-broker class, minutes of failover scenarios (development.md)
@Order(1)   // among the longest: starts early in the parallel run (see development.md)
@Timeout(600)
class FailoverIT extends OnSharedBroker {
    private static final int PARTITIONS = 4;
    private static final int RATE = 400;
    private static final Duration STALL_BOUND = Duration.ofSeconds(30);
    /** Steady stamping before a fault, and after the last one. */
    private static final Duration SETTLE = Duration.ofSeconds(5);

    private final List<ChildJvm> started = new ArrayList<>();
    private final List<Scenario> scenarios = new ArrayList<>();

    @TempDir
    Path work;

    @AfterEach
    void stopInstances() throws Exception {
        for (ChildJvm instance : started) {
            instance.close();
        }
        // after a failed assertion: the load and the watchers must not outlive the test
        for (Scenario scenario : scenarios) {
            scenario.producer.close();
            scenario.stalls.close();
            scenario.ends.close();
        }
    }

    @Test
    void shouldStampAgainSoonAfterOneOfTwoInstancesIsKilled() throws Exception {
        Scenario s = new Scenario("kill-1-of-2", "exactly_once_v2");
        ChildJvm[] instances = s.startAll("a", "b");
        s.steady();
        int before = instances[0].stderr().length();
        boolean open = freezeWithAnOpenTransaction(s, instances[1]);
        s.kill(instances[1], "b");
        s.everyPartitionStamps("b's partitions moved to a");
        // the mechanism behind the figure (benchmarks.md), not a loose time: the survivor fenced the open transaction b left
        // as the restore of b's tasks started, instead of waiting for the broker to abort it (transaction.timeout.ms, 20 s)
        String survivor = instances[0].stderr().substring(before);
        boolean fenceChecked = !survivor.contains("cannot check for a previous owner's open transaction");
        if (fenceChecked && open) {
            assertThat(survivor).as("a fenced b's open transaction").contains("(open transactions of a previous owner on");
            assertFencedWhatMovedFromB(s, survivor, instances[1].stderr());
        }
        s.finishExactlyOnce(instances[0]);
        // what the next owner restores stays small: compaction needs closed segments
        assertThat(topicConfig(Names.changelogTopic(s.spec.applicationId()), "segment.ms")).isEqualTo("600000");
        // the fence is best effort (design.md): an admin call that timed out on a loaded host is logged, and the broker
        // aborts b's transaction after transaction.timeout.ms. The IDs were checked all the same, but the mechanism was not:
        // reported as skipped, so that a run where it never gets checked shows
        org.junit.jupiter.api.Assumptions.assumeTrue(open, "kill-1-of-2: b was never seen with an open transaction before"
                + " its kill, so the fence was not checked (IDs were)");
        org.junit.jupiter.api.Assumptions.assumeTrue(fenceChecked, () -> "kill-1-of-2: a could not check for b's open"
                + " transactions, so the fence was not checked (IDs were): " + survivor.lines()
                .filter(line -> line.contains("cannot check for a previous owner")).findFirst().orElse(""));
    }

    /**
     * Freezes b (SIGSTOP) at a moment one of its transactions is open on an output partition it holds, so that its kill
     * leaves one for the survivor to fence: killed between two transactions (a commit done, the next record not yet
     * sent) it leaves none, and under CI's load that happened. Tries for a while; returns whether it froze b so.
     */
    private static boolean freezeWithAnOpenTransaction(Scenario s, ChildJvm b) throws Exception {
        java.util.Set<Integer> held = leasesTaken(b.stderr(), "b");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            for (int attempt = 0; attempt < 50; attempt++) {
                int stopped = new ProcessBuilder("kill", "-STOP", String.valueOf(b.pid())).inheritIO().start().waitFor();
                assertThat(stopped).as("kill -STOP").isZero();
                b.awaitFrozen(10);
                if (openOn(admin, s.spec.applicationId(), s.topics.out(), held)) {
                    return true;
                }
                b.thaw();
                Thread.sleep(20);
            }
        }
        return false;
    }

    /** Whether a transaction of the application is open on one of {@code partitions} of {@code topic}. */
    private static boolean openOn(Admin admin, String app, String topic, java.util.Set<Integer> partitions) throws Exception {
        java.util.Set<String> ids = new java.util.TreeSet<>();
        for (var listing : admin.listTransactions(new org.apache.kafka.clients.admin.ListTransactionsOptions()
                .filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.ONGOING))).all().get()) {
            if (listing.transactionalId().startsWith(app + "-")) {
                ids.add(listing.transactionalId());
            }
        }
        if (ids.isEmpty()) {
            return false;
        }
        return admin.describeTransactions(ids).all().get().values().stream().flatMap(d -> d.topicPartitions().stream())
                .anyMatch(tp -> tp.topic().equals(topic) && partitions.contains(tp.partition()));
    }

    /**
     * What was fenced: transactional ids of the application (Kafka Streams' {@code APP-...}), open on partitions of its
     * output or worker-state changelog that b had held and that a took over after the kill — not a's own, not another
     * partition's.
     */
    private static void assertFencedWhatMovedFromB(Scenario s, String survivorLog, String killedLog) {
        String app = s.spec.applicationId();
        java.util.Set<Integer> fenced = new java.util.TreeSet<>();
        java.util.regex.Matcher fence = java.util.regex.Pattern.compile(
                "fenced \\[([^\\]]+)] \\(open transactions of a previous owner on \\[([^\\]]+)]\\)").matcher(survivorLog);
        while (fence.find()) {
            for (String id : fence.group(1).split(", ")) {
                assertThat(id).as("a fenced transactional id").startsWith(app + "-");
            }
            for (String partition : fence.group(2).split(", ")) {
                String topic = partition.substring(0, partition.lastIndexOf('-'));
                assertThat(topic).as("a fenced partition's topic").isIn(s.topics.out(), Names.changelogTopic(app));
                fenced.add(Integer.parseInt(partition.substring(partition.lastIndexOf('-') + 1)));
            }
        }
        java.util.Set<Integer> heldByB = leasesTaken(killedLog, "b");
        java.util.Set<Integer> takenByA = leasesTaken(survivorLog, "a");
        System.out.println("kill-1-of-2: b held partitions " + heldByB + ", a took " + takenByA + " after the kill and fenced open"
                + " transactions on " + fenced);
        assertThat(fenced).as("partitions whose open transactions a fenced").isNotEmpty().isSubsetOf(heldByB).isSubsetOf(takenByA);
    }

    /** Partitions whose lease an instance took, from its log. */
    static java.util.Set<Integer> leasesTaken(String log, String instance) {
        java.util.Set<Integer> partitions = new java.util.TreeSet<>();
        java.util.regex.Matcher taken = java.util.regex.Pattern.compile("partition (\\d+) worker \\d+: lease epoch \\d+ taken by "
                + instance + "#").matcher(log);
        while (taken.find()) {
            partitions.add(Integer.parseInt(taken.group(1)));
        }
        return partitions;
    }

    @Test
    void shouldStampAgainSoonAfterThreeOfFourInstancesAreKilledWithin20Seconds() throws Exception {
        Scenario s = new Scenario("3-kills-in-20s", "exactly_once_v2");
        ChildJvm[] instances = s.startAll("a", "b", "c", "d");
        s.steady();
        for (int i = 1; i <= 3; i++) {
            if (i > 1) {
                Thread.sleep(8_000);
            }
            s.kill(instances[i], "abcd".substring(i, i + 1));
        }
        s.everyPartitionStamps("every partition on a");
        s.finishExactlyOnce(instances[0]);
    }

    /** Exactly-once: nothing the frozen process writes after it resumes becomes visible (its transaction is fenced). */
    @Test
    void shouldHideWhatAFrozenInstanceWritesAfterItsPartitionsMovedUnderExactlyOnce() throws Exception {
        Scenario s = new Scenario("freeze-eos", "exactly_once_v2");
        ChildJvm frozen = s.freezeAndResume();
        s.finishExactlyOnce(frozen);
    }

    /** At-least-once: the frozen process wakes with its lease expired or taken and issues no further ID for partitions it lost. */
    @Test
    void shouldIssueNoIdFromAFrozenInstanceAfterItsPartitionsMovedUnderAtLeastOnce() throws Exception {
        Scenario s = new Scenario("freeze-alos", "at_least_once");
        ChildJvm frozen = s.freezeAndResume();
        s.finishAtLeastOnce(frozen);
        assertThat(frozen.stderr()).as("the resumed process found its lease expired or taken")
                .contains("no further ID is issued here");
    }

    /**
     * At-least-once, the worst moment: the process stops itself after an ID's lease check passed and before the
     * generator reads its clock (issue 31). It wakes after its partitions moved; the ID it then takes is above its
     * acknowledged reservation, and its lease has run out: the ID is dropped, never forwarded.
     */
    @Test
    void shouldDropTheIdOfAnInstanceFrozenBetweenItsLeaseCheckAndItsIdUnderAtLeastOnce() throws Exception {
        Scenario s = new Scenario("freeze-checked-alos", "at_least_once");
        ChildJvm frozen = s.freezeAndResume("-Dsnowstamp.test.freeze-step=checked");
        s.finishAtLeastOnce(frozen);
        assertThat(frozen.stderr()).as("frozen between the check and the ID").contains("at CHECKED of an ID");
        assertThat(frozen.stderr()).as("the resumed process dropped the ID it took").contains("the ID is dropped");
    }

    @Test
    void shouldKeepEveryPartitionStampingThroughARollingRestart() throws Exception {
        Scenario s = new Scenario("rolling-restart", "exactly_once_v2");
        ChildJvm[] instances = s.startAll("a", "b", "c");
        s.steady();
        for (int i = 0; i < instances.length; i++) {
            // not a fault: the clean stop commits its last records, so a first record soon after says nothing
            s.timeline.mark("%s stopping (SIGTERM), holding tasks %s", "abc".charAt(i), holding(instances[i]));
            assertThat(instances[i].terminate(60)).as(instances[i].logs()).isIn(0, 143);
            instances[i] = s.start(s.stamper("abc".substring(i, i + 1)));
            s.timeline.mark("%s back", "abc".charAt(i));
        }
        s.finishExactlyOnce(instances);
    }

    private static String topicConfig(String topic, String key) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            return admin.describeConfigs(List.of(resource)).all().get().get(resource).get(key).value();
        }
    }

    /** The tasks an instance last reported holding ({@code stamper A -> B (tasks: [0, 2])} log lines). */
    private static String holding(ChildJvm instance) throws Exception {
        String log = instance.stderr();
        int at = log.lastIndexOf("(tasks: ");
        return at < 0 ? "?" : log.substring(at + 8, log.indexOf(')', at));
    }

    /** One scenario: its own topics, application and producer on the shared broker. */
    private final class Scenario {
        final Timeline timeline;
        final long origin = System.currentTimeMillis();
        final Stamper.Topics topics;
        final Stamper spec;
        final NumberedProducer producer;
        final TopicEnds ends;
        final OutputStalls stalls;
        /** When each fault happened (wall clock), and what it was. */
        final Map<Long, String> faults = new TreeMap<>();
        long steadySince;
        long frozenAtMillis = Long.MAX_VALUE;

        Scenario(String name, String guarantee) throws Exception {
            timeline = new Timeline(name);
            topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
            Stamper base = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a")
                    .with("processing.guarantee", guarantee);
            // at-least-once commits every 30 s by default: a crash would re-stamp that much; once a second is the usual choice
            spec = guarantee.equals("at_least_once") ? base.with("kafka.commit.interval.ms", "1000") : base;
            producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), 200_000, RATE).start();
            ends = new TopicEnds(broker.bootstrapServers());
            stalls = OutputStalls.watch(broker.bootstrapServers(), topics.out());
            scenarios.add(this);
        }

        Stamper stamper(String id) {
            return spec.instance(id);
        }

        /** Starts the instances side by side and waits until each stamps. */
        ChildJvm[] startAll(String... ids) throws Exception {
            List<ChildJvm> children = new ArrayList<>();
            for (String id : ids) {
                ChildJvm child = stamper(id).launch();
                started.add(child);
                children.add(child);
            }
            for (int i = 0; i < ids.length; i++) {
                children.get(i).awaitOutput(Stamper.STARTED + topics.in(), 120);
                children.get(i).awaitLog("taken by " + ids[i] + "#", 120);
            }
            timeline.mark("%s stamping", String.join(", ", ids));
            return children.toArray(ChildJvm[]::new);
        }

        ChildJvm start(Stamper stamper) throws Exception {
            ChildJvm child = stamper.start();
            started.add(child);
            child.awaitLog("taken by " + stamper.instanceId() + "#", 120);
            return child;
        }

        /** Waits until every partition stamps, then a little longer: the stall window starts here. */
        void steady() throws Exception {
            everyPartitionStamps("steady");
            Thread.sleep(SETTLE.toMillis());
            steadySince = System.currentTimeMillis();
        }

        void kill(ChildJvm instance, String id) throws Exception {
            String holding = holding(instance);
            instance.kill();
            fault("%s killed (SIGKILL), held tasks %s", id, holding);
        }

        void fault(String what, Object... args) {
            faults.put(System.currentTimeMillis(), String.format(Locale.ROOT, what, args));
            timeline.mark(what, args);
        }

        void everyPartitionStamps(String what) throws Exception {
            Map<Integer, Long> before = ends.committedPerPartition(topics.out());
            assertThat(ends.awaitEveryPartitionGrown(topics.out(), before, 50, Duration.ofSeconds(120)))
                    .as("every partition stamps again: %s", what).isTrue();
            timeline.mark("%s: every partition stamps", what);
        }

        /**
         * Two instances, the frozen one started with the hook that makes it SIGSTOP itself in the
         * middle of a batch; waits until its partitions stamp on the other, then resumes it.
         */
        ChildJvm freezeAndResume(String... jvmArgs) throws Exception {
            ChildJvm other = startAll("b")[0];
            everyPartitionStamps("b alone");
            // a few seconds into stamping on a: by then a holds half the partitions and stamps steadily
            Stamper a = stamper("a").withJvmArg("-Dsnowstamp.test.freeze-at-record=" + (RATE * 3 / 2));
            for (String arg : jvmArgs) {
                a = a.withJvmArg(arg);
            }
            ChildJvm frozen = start(a);
            steadySince = System.currentTimeMillis();
            frozen.awaitFrozen(120);
            frozenAtMillis = System.currentTimeMillis();
            fault("a stopped itself (SIGSTOP) inside process(), holding tasks %s", holding(frozen));
            everyPartitionStamps("a's partitions moved to b while a is frozen");
            Thread.sleep(2_000);
            frozen.thaw();
            timeline.mark("a resumed (SIGCONT)");
            frozen.awaitLog("resumed (SIGCONT)", 30);
            Thread.sleep(SETTLE.toMillis());
            everyPartitionStamps("after the resume");
            assertThat(other.isAlive()).as(other.logs()).isTrue();
            return frozen;
        }

        void finishExactlyOnce(ChildJvm... alive) throws Exception {
            long produced = stopAndMeasure(alive);
            Verification verify = Verification.await(broker.bootstrapServers(), topics.out(), topics.in(),
                    v -> v.records() >= produced && v.missing() == 0, Duration.ofSeconds(120));
            timeline.mark("produced %d; verified: %s", produced, verify.summaryLine());
            assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(produced));
            assertThat(verify.exitCode()).as(verify.toString()).isZero();
        }

        void finishAtLeastOnce(ChildJvm... alive) throws Exception {
            long produced = stopAndMeasure(alive);
            Verification verify = Verification.awaitSettled(broker.bootstrapServers(), topics.out(), topics.in(), produced,
                    Duration.ofSeconds(120));
            timeline.mark("produced %d; verified: %s", produced, verify.summaryLine());
            assertThat(verify.duplicates()).as(verify.toString()).isZero();
            assertThat(verify.missing()).as(verify.toString()).isZero();
            // issue 43: the next owner skips the inputs already in the output; what can still be stamped twice is what
            // the frozen instance's producer held unsent at the freeze (consuming.md), far below a second of input — the
            // old code stamped every input since the last commit (up to 30 s) again
            assertThat(verify.extra()).as("inputs stamped twice: " + verify).isLessThanOrEqualTo(RATE);
            assertThat(lateIdsIssuedAfterTheFreeze()).as("IDs below an earlier ID of their partition, issued after the freeze")
                    .isEmpty();
        }

        /**
         * An ID the zombie issues after it resumes lands behind IDs of the partition's new owner that
         * are higher (checked: without a guard — the freeze guard then, the lease now — this finds them). IDs the zombie had issued
         * before the freeze may land there too (the producer sends what it buffered when the process
         * resumes): lower than the new owner's, so unique, but out of order. Returns the out-of-order
         * IDs issued after the freeze: none may exist.
         */
        List<String> lateIdsIssuedAfterTheFreeze() {
            IdLayout layout = IdLayout.preset("snowflake");
            Map<Integer, Long> highest = new HashMap<>();
            List<String> late = new ArrayList<>();
            for (StampedRecords.Stamped record : StampedRecords.read(broker.bootstrapServers(), topics.out())) {
                long before = highest.merge(record.partition(), record.id(), Math::max);
                if (record.id() < before && layout.decode(record.id()).wallMillis() > frozenAtMillis) {
                    late.add("partition " + record.partition() + " offset " + record.offset() + ": " + record.id()
                            + " (" + layout.decode(record.id()).instant() + ") after " + before);
                }
            }
            timeline.mark("out-of-order IDs issued after the freeze: %d", late.size());
            return late;
        }

        /** Stops the load, prints the stalls seen since the steady state and checks the bound; returns the records produced. */
        private long stopAndMeasure(ChildJvm... alive) throws Exception {
            Thread.sleep(SETTLE.toMillis());
            long until = System.currentTimeMillis();
            long produced = producer.stop();
            // a task closed by the lease or a fenced transaction is no bad record
            assertThat(ends.total(topics.dlq())).as("records in the dead-letter topic").isZero();
            ends.close();
            for (ChildJvm instance : alive) {
                assertThat(instance.isAlive()).as(instance.logs()).isTrue();
            }
            stalls.close();
            OutputStalls.Report seen = stalls.report(steadySince, until);
            timeline.mark("%s", seen.describe(origin));
            faults.forEach((at, what) -> timeline.mark("every partition stamps %.1f s after: %s",
                    stalls.everyPartitionAfter(at) / 1e3, what));
            assertThat(seen.worst().millis()).as(seen.describe(origin)).isLessThan(STALL_BOUND.toMillis());
            return produced;
        }
    }
}
