package io.snowstamp.it.cluster;

import io.snowstamp.stream.Names;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OutputStalls;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.Verification;
import io.snowstamp.testing.cluster.KafkaCluster;
import io.snowstamp.testing.cluster.KafkaNode;
import io.snowstamp.testing.cluster.Netns;
import io.snowstamp.testing.cluster.NodeView;
import io.snowstamp.testing.cluster.SharedCluster;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The deposed leader on the three-node cluster ({@link KafkaCluster}): the node X that leads the stampers' changelog
 * partitions is cut off from the controllers (both ways, controller ports) while the old owner stamper still reaches it.
 * The controller fences X once its session has run out ({@code broker.session.timeout.ms}, 9 s) and elects the next
 * replica G; the followers fetch from G from then on, X does not learn it, and goes on answering as leader with its old
 * committed end, which holds neither the new owner's lease record nor anything written since. An at-least-once stamper
 * whose lease round asks X gets its lease confirmed for as long as that lasts. What keeps the IDs apart there is that a
 * reservation covers IDs only once a round confirming the lease read the changelog past it, and X can acknowledge no
 * new reservation (its followers no longer fetch from it, and it cannot shrink its ISR without the controller): the old
 * owner issues at most up to its last reservation read back before the move, which the new leader's log holds and the
 * new owner resumes above (design.md, "Why two owners never forward the same ID").
 *
 * <p>Two stampers a and b ({@code snowstamp run}, shipped defaults, {@code processing.guarantee=at_least_once}, child
 * JVMs under uids of their own) on topics of {@value #PARTITIONS} partitions under a steady {@value #RATE} records/s.
 * Three roles on three nodes: X (not the active controller) leads every changelog partition, replicas in the order X,
 * D, G — so the new leader is D, which a still reaches: a's producer, after a request to X times out, learns D from D
 * and gets its next reservation acknowledged there while X keeps confirming a's lease (the schedule the read-back rule
 * is for: counting that acknowledgement, a would issue IDs b issues too); G coordinates the stampers' group; D leads
 * the input and output partitions. For {@value #FAULT_SECONDS} s, all
 * at once: X cut off from the controllers (its followers still reach it, so a's reservations are acknowledged, and a
 * stamps on, until the controller moves the partitions); a cut off from G (the group evicts it and gives its partitions
 * to b) but reaching X and D; b's packets to X refused with a TCP reset (b only ever talks to the new leader, and its
 * clients, told at once that X is gone, find the new leader as soon as the controller has moved the partitions).
 *
 * <p>It asserts that the window is open: after G names a new leader of a changelog partition (the controller fenced
 * X), X itself, asked on a connection of its own ({@link NodeView}), still names itself leader at an older leader
 * epoch, with a committed end below the new leader's. And that two owners held a partition at once: b, after the
 * move, stamped records of a partition a held under a lease of its own (they reached the output), while a still held
 * it, its lease still confirmed by X (it read no newer lease, missed no confirmation), until a gave the partition back
 * because a reservation was not acknowledged and read back ({@code reservation-unacknowledged}, 20 s after its first
 * ID waited). It prints the
 * controller's fencing line, a's and b's lines about each partition's lease and reservations in the window, what they
 * logged about their tasks and the longest output stall, and has the stampers dump their threads at the end of the
 * window (SIGQUIT: into their {@code .out} files under {@code target/fault-logs/<application id>/}), where a stall's
 * cause shows. After the links heal and every replica is back in sync, {@code verify} over everything produced: no ID
 * on two source records, no input record missing.
 *
 * <p>Alone: {@code mvn -B verify -Dtest=none -Dit.test=DeposedLeaderIT -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: the three-node cluster (development.md)
@Timeout(600)
@ExtendWith(SharedCluster.class)
@ResourceLock(SharedCluster.LOCK)
class DeposedLeaderIT {
    private static final int PARTITIONS = 4;
    private static final int RATE = 200;
    private static final int FAULT_SECONDS = 45;
    private static final Duration SETTLE = Duration.ofSeconds(5);
    private static final Duration RECOVERY = Duration.ofSeconds(150);
    /** Uids of the two stampers: apart from ClusterFaultIT's (23101-23104) and the nodes' (23201-23203). */
    private static final int FIRST_UID = 23111;
    /** What the stampers log about their tasks' leases and reservations (the text log's messages). */
    private static final Pattern TASK_EVENTS = Pattern.compile("no confirmation of lease|shows a newer lease|was not acknowledged"
            + "|ms for the reservation|confirmed again after|confirmed by the changelog|taken by|restoring again|\\(tasks: ");
    private static final int MAX_LINES = 30;

    @Test
    void shouldIssueNoIdTwiceWhileADeposedChangelogLeaderStillConfirmsTheOldOwnersLease(KafkaCluster cluster) throws Exception {
        Timeline timeline = new Timeline("deposed");
        // a previous class's faults may have moved leaders: the placement below starts from the preferred ones
        cluster.awaitFullIsr(RECOVERY);
        cluster.electPreferredLeaders();
        int controller = cluster.activeController().id();
        KafkaNode x = cluster.nodes().stream().filter(node -> node.id() != controller).findFirst().orElseThrow();
        List<KafkaNode> others = cluster.nodes().stream().filter(node -> node != x).toList();
        KafkaNode g = others.get(0);
        KafkaNode d = others.get(1);
        Netns netns = cluster.netns();
        Path work = Files.createTempDirectory("snowstamp-deposed-it");
        // the stampers run under uids of their own: they must get to their state directories
        work.toFile().setReadable(true, false);
        work.toFile().setExecutable(true, false);

        String applicationId = ClusterStampers.applicationIdCoordinatedBy(cluster, g.id(), "deposed");
        Stamper.Topics topics = new Stamper.Topics(TestBroker.unique("deposed-raw"), TestBroker.unique("deposed-stamped"),
                TestBroker.unique("deposed-dlq"));
        List<Integer> dataOrder = List.of(d.id(), g.id(), x.id());
        cluster.createTopic(topics.in(), Collections.nCopies(PARTITIONS, dataOrder), Map.of());
        cluster.createTopic(topics.out(), Collections.nCopies(PARTITIONS, dataOrder), Map.of());
        cluster.createTopic(topics.dlq(), List.of(dataOrder), Map.of());
        Stamper base = Stamper.of(work, cluster.bootstrapServers(), applicationId, topics, "a")
                .with("processing.guarantee", "at_least_once");
        Map<String, Integer> uids = new LinkedHashMap<>();
        Map<String, ChildJvm> instances = new LinkedHashMap<>();
        NumberedProducer load = null;
        OutputStalls output = null;
        try {
            for (String id : List.of("a", "b")) {
                uids.put(id, FIRST_UID + uids.size());
                instances.put(id, ClusterStampers.underUid(base.instance(id), netns, uids.get(id), List.of()).launch());
            }
            ClusterStampers.awaitStamping(instances, topics.in());
            String changelog = Names.changelogTopic(applicationId);
            ClusterStampers.placeChangelogs(cluster, applicationId, p -> List.of(x.id(), d.id(), g.id()));
            for (int p = 0; p < PARTITIONS; p++) {
                assertThat(cluster.leaderOf(changelog, p)).as("leader of %s-%d", changelog, p).isEqualTo(x);
                assertThat(cluster.leaderOf(topics.in(), p)).as("leader of input %d", p).isEqualTo(d);
                assertThat(cluster.leaderOf(topics.out(), p)).as("leader of output %d", p).isEqualTo(d);
            }
            assertThat(cluster.groupCoordinator(applicationId)).as("the stampers' group coordinator").isEqualTo(g);
            timeline.mark("%s: a and b stamping (uids %s); X = %s leads %s (replicas X, D, G), G = %s coordinates the group, D = %s"
                    + " leads input and output; active controller: node %d", applicationId, uids.values(), x, changelog, g, d, controller);

            load = new NumberedProducer(cluster.bootstrapServers(), topics.in(), 0, NumberedProducer.UNTIL_STOPPED, RATE,
                    Duration.ofMinutes(3)).start();
            output = OutputStalls.watch(cluster.bootstrapServers(), topics.out(), KafkaCluster.observerSettings());
            List<OutputStalls> outputs = List.of(output);
            Callable<String> logs = () -> ClusterStampers.tails(instances, "deposed", 3_000);
            ClusterStampers.awaitFlowing(timeline, "steady", 0, RECOVERY, outputs, PARTITIONS, logs);
            Thread.sleep(SETTLE.toMillis());

            Map<String, Integer> logStart = new LinkedHashMap<>();
            for (Map.Entry<String, ChildJvm> instance : instances.entrySet()) {
                logStart.put(instance.getKey(), instance.getValue().stderr().length());
            }
            Map<Integer, NodeView> before = new TreeMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                before.put(p, NodeView.ask(x, new TopicPartition(changelog, p)));
            }
            timeline.mark("fault: X = %s cut off from the controller ports of %s and %s; a (uid %d) cut off from G, reaching X and D; b (uid %d)"
                    + " refused by X; for %d s. a holds %s, b holds %s; before it %s", x, g, d, uids.get("a"), uids.get("b"), FAULT_SECONDS,
                    ClusterStampers.holding(instances.get("a")), ClusterStampers.holding(instances.get("b")), before.values());
            long faultStart = System.currentTimeMillis();
            Window window = new Window(timeline, changelog, x, List.of(g, d));
            List<Netns.Rule> rules = new ArrayList<>();
            long back;
            try {
                // from the controllers only: X's followers fetch from it until the controller moves the partitions, so a's
                // next ID waits from the move on, and a holds its partitions for 20 s after it. Isolated from G and D too,
                // X acknowledged nothing from the cut on, and a gave its partitions back within about a second of b's
                // first ID after the move (the fence alone took 9-15 s)
                rules.add(cluster.cutFromControllers(x));
                rules.add(netns.cut(uids.get("a"), List.of(g.port())));
                // refused, not dropped: b's clients learn at once that X is gone and ask G or D where the leaders are, so
                // they find the new changelog leader as soon as the controller has moved it (dropped, b's producer and
                // Kafka Streams' assignment step waited on requests to X and b took nothing over while the fault lasted)
                rules.add(netns.rejectOwnPackets(uids.get("b"), List.of(x.port())));
                timeline.mark("rules in place at %s (the stampers' log times), %d ms after the fault began", LocalTime.now(),
                        System.currentTimeMillis() - faultStart);
                long end = System.nanoTime() + Duration.ofSeconds(FAULT_SECONDS).toNanos();
                while (System.nanoTime() < end) {
                    window.look();
                    Thread.sleep(500);
                }
                // where each stamper's threads wait at the end of the window (a stall's cause), in its .out file
                for (ChildJvm instance : instances.values()) {
                    new ProcessBuilder("kill", "-QUIT", String.valueOf(instance.pid())).inheritIO().start().waitFor();
                }
            } finally {
                for (Netns.Rule rule : rules) {
                    rule.close();
                }
                back = System.currentTimeMillis();
            }
            String fenced = cluster.node(controller).log().lines().filter(line -> line.contains("Fencing broker " + x.id() + " "))
                    .reduce((first, second) -> second).orElse("(no line)");
            timeline.mark("the active controller's log: %s", fenced);
            timeline.mark("the last look before the links healed:\n    %s", window.lastLook.replace("\n", "\n    "));
            timeline.mark("links healed (the stampers' threads at the end of the fault: their .out files in %s); a holds %s, b holds %s",
                    base.logDir(), ClusterStampers.holding(instances.get("a")),
                    ClusterStampers.holding(instances.get("b")));
            Map<String, String> inWindow = new LinkedHashMap<>();
            for (Map.Entry<String, ChildJvm> instance : instances.entrySet()) {
                String log = instance.getValue().stderr();
                inWindow.put(instance.getKey(), log.substring(logStart.get(instance.getKey())));
                logStart.put(instance.getKey(), log.length());
            }
            inWindow.forEach((id, log) -> printEvents(timeline, id + " during the fault", log));
            Map<Integer, String> overlaps = overlaps(timeline, inWindow, window.movedAt, output, faultStart, back);

            cluster.awaitFullIsr(RECOVERY);
            cluster.electPreferredLeaders();
            timeline.mark("every replica back in sync, leaders in place: X = %s leads %s-0 again", cluster.leaderOf(changelog, 0), changelog);
            ClusterStampers.awaitFlowing(timeline, "every partition stamps again", 0, RECOVERY, outputs, PARTITIONS, logs);
            Thread.sleep(SETTLE.toMillis());
            for (Map.Entry<String, ChildJvm> instance : instances.entrySet()) {
                printEvents(timeline, instance.getKey() + " after the fault", instance.getValue().stderr().substring(logStart.get(instance.getKey())));
            }

            long produced = load.stop();
            load = null;
            OutputStalls.Report stall = output.report(faultStart, output.stallEndAt(back));
            OutputStalls.Report after = output.report(output.stallEndAt(back) + 1, System.currentTimeMillis());
            timeline.mark("longest output stall after the fault: %.1f s | %s", stall.worst().millis() / 1e3, stall.describe(faultStart));
            timeline.mark("longest output stall after the links healed: %.1f s | %s", after.worst().millis() / 1e3, after.describe(faultStart));
            Verification verified = Verification.awaitSettled(cluster.bootstrapServers(), topics.out(), topics.in(), produced,
                    RECOVERY);
            timeline.mark("produced %d; verified: %s", produced, verified.summaryLine());

            assertThat(window.seen).as("partitions of %s that X still led, after the controller had moved them, with a committed end"
                    + " below the new leader's (the window this test is about)\n%s", changelog, window.lastLook).isNotEmpty();
            assertThat(verified.missing()).as("input records never stamped\n%s", verified).isZero();
            assertThat(verified.duplicates()).as("IDs on two different source records\n%s", verified).isZero();
            for (Map.Entry<String, ChildJvm> instance : instances.entrySet()) {
                assertThat(instance.getValue().isAlive()).as("%s alive\n%s", instance.getKey(), instance.getValue().logs()).isTrue();
            }
            // whether b took a partition over while a still held it depends on how fast the group moves it on this host: on
            // a loaded one, b's takeover came after a gave the partition back. The guarantee was checked above either way;
            // a run without two owners did not try the schedule, and says so (skipped) rather than pass as if it had
            assumeThat(overlaps).as("partitions that b stamped under a lease of its own, after the controller had moved their"
                    + " changelog away from X, while a still held them, its lease still confirmed by X (no newer lease read), until"
                    + " its reservation was not read back (the two owners this test is about; a's and b's lines per partition are"
                    + " above): none this run, so the schedule was not tried").isNotEmpty();
        } finally {
            if (load != null) {
                load.close();
            }
            if (output != null) {
                output.close();
            }
            for (ChildJvm instance : instances.values()) {
                instance.close();
            }
            try (var paths = Files.walk(work)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    /**
     * The partitions two owners held at once during the fault, with what shows it: b started issuing under a lease of its
     * own after this test saw the partition's changelog moved away from X (b cannot reach X: its lease record was
     * acknowledged by the new leader), and a, which held the partition, gave it back only later, because a reservation
     * of its was not acknowledged and read back (X still confirming its lease), having logged neither a newer lease nor
     * a missing confirmation for it before that. Prints each partition's lines of a and b from the fault until the links
     * healed at {@code healed}.
     */
    private static Map<Integer, String> overlaps(Timeline timeline, Map<String, String> inWindow, Map<Integer, Long> movedAt,
                                                 OutputStalls output, long faultStart, long healed) {
        Map<String, List<TaskLine>> lines = new LinkedHashMap<>();
        inWindow.forEach((id, log) -> lines.put(id, TaskLine.parse(log, faultStart).stream()
                .filter(line -> line.atMillis() < healed && line.kind() != TaskLine.Kind.OTHER).toList()));
        Map<Integer, String> overlaps = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            Long moved = movedAt.get(p);
            timeline.mark("partition %d: changelog seen moved at %s; its lines until the links healed (+%.1fs):", p,
                    moved == null ? "never" : String.format(Locale.ROOT, "+%.1fs", (moved - faultStart) / 1e3), (healed - faultStart) / 1e3);
            lines.forEach((id, of) -> of.stream().filter(line -> line.partition() == partition)
                    .forEach(line -> System.out.println("    " + id + " " + line.since(faultStart))));
            List<TaskLine> ofA = lines.get("a").stream().filter(line -> line.partition() == partition).toList();
            TaskLine issuing = lines.get("b").stream().filter(line -> line.partition() == partition && line.kind() == TaskLine.Kind.ISSUING
                    && moved != null && line.atMillis() > moved).findFirst().orElse(null);
            TaskLine dropped = ofA.stream().filter(line -> line.kind() == TaskLine.Kind.UNACKNOWLEDGED).findFirst().orElse(null);
            if (issuing == null || dropped == null || dropped.atMillis() <= issuing.atMillis()) {
                continue;
            }
            boolean unconfirmed = ofA.stream().anyMatch(line -> line.atMillis() <= dropped.atMillis()
                    && EnumSet.of(TaskLine.Kind.UNCONFIRMED, TaskLine.Kind.LAPSED).contains(line.kind()));
            boolean lost = ofA.stream().anyMatch(line -> line.kind() == TaskLine.Kind.LOST);
            // a's task waits for its reservation all that time, stamping nothing: what reaches the output then is b's
            long stamped = output.arrivals(p, issuing.atMillis(), dropped.atMillis());
            if (!unconfirmed && !lost && stamped > 0) {
                String what = String.format(Locale.ROOT, "b issuing from +%.1fs (output records of the partition in %d polls"
                                + " after that), a giving it back at +%.1fs (reservation not read back)",
                        (issuing.atMillis() - faultStart) / 1e3, stamped, (dropped.atMillis() - faultStart) / 1e3);
                overlaps.put(p, what);
                timeline.mark("two owners of partition %d: %s", p, what);
            }
        }
        return overlaps;
    }

    /** The lines of {@code log} that tell what happened to the stamper's tasks (the first {@link #MAX_LINES}). */
    private static void printEvents(Timeline timeline, String what, String log) {
        List<String> lines = log.lines().filter(line -> TASK_EVENTS.matcher(line).find()).toList();
        timeline.mark("%s: %d lines about its tasks%s", what, lines.size(), lines.size() > MAX_LINES ? " (the first " + MAX_LINES + ")" : "");
        lines.stream().limit(MAX_LINES).forEach(line -> System.out.println("    " + line));
    }

    /**
     * What the cut-off node X and the others say about each changelog partition, looked at again and again while the
     * fault lasts: when the others first name a new leader (the controller fenced X and moved the partition), and when X,
     * after that, still names itself leader at an older epoch with a committed end below the new leader's.
     */
    private static final class Window {
        private final Timeline timeline;
        private final String changelog;
        private final KafkaNode x;
        private final List<KafkaNode> others;
        private final Map<Integer, NodeView> moved = new TreeMap<>();
        /** When this test first saw each partition moved (epoch milliseconds): at most one look after the controller did. */
        final Map<Integer, Long> movedAt = new TreeMap<>();
        /** Partitions in which the window was seen open, with the first look that showed it. */
        final Map<Integer, String> seen = new TreeMap<>();
        String lastLook = "(none)";

        Window(Timeline timeline, String changelog, KafkaNode x, List<KafkaNode> others) {
            this.timeline = timeline;
            this.changelog = changelog;
            this.x = x;
            this.others = others;
        }

        void look() {
            List<String> looks = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                TopicPartition partition = new TopicPartition(changelog, p);
                try {
                    NodeView deposed = NodeView.ask(x, partition);
                    NodeView elsewhere = NodeView.ask(others.get(0), partition);
                    looks.add(p + ": " + deposed + "; " + elsewhere);
                    if (elsewhere.leader() < 0 || elsewhere.leader() == x.id()) {
                        continue;
                    }
                    if (!moved.containsKey(p)) {
                        moved.put(p, elsewhere);
                        movedAt.put(p, System.currentTimeMillis());
                        timeline.mark("the controller moved %s-%d: %s; %s", changelog, p, elsewhere, deposed);
                    }
                    NodeView leader = elsewhere.leader() == elsewhere.node() ? elsewhere
                            : NodeView.ask(others.stream().filter(node -> node.id() == elsewhere.leader()).findFirst().orElseThrow(), partition);
                    looks.add(p + ": new leader " + leader);
                    if (!seen.containsKey(p) && deposed.leadsItself() && deposed.leaderEpoch() < leader.leaderEpoch()
                            && leader.leadsItself() && deposed.committedEnd() < leader.committedEnd()) {
                        String what = String.format("X still answers as leader of %s-%d: %s; the new leader: %s", changelog, p, deposed, leader);
                        seen.put(p, what);
                        timeline.mark("window open: %s", what);
                    }
                } catch (Exception e) {
                    looks.add(p + ": " + e);
                }
            }
            lastLook = String.join("\n", looks);
        }
    }
}
