package io.snowstamp.it.cluster;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.OutputStalls;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.cluster.KafkaCluster;
import io.snowstamp.testing.cluster.Netns;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * What the fault tests on the three-node cluster share: an application id whose group a chosen node
 * coordinates, stamper instances under uids of their own in the cluster's namespace, the stampers'
 * changelogs placed like their data topics, and the waits for stamping and for records flowing in every
 * partition.
 */
final class ClusterStampers {
    private ClusterStampers() {
    }

    /** A new application id whose group node {@code node} coordinates (once leaders are in their preferred place). */
    static String applicationIdCoordinatedBy(KafkaCluster cluster, int node, String prefix) throws Exception {
        for (int i = 0; i < 200; i++) {
            String candidate = TestBroker.unique(prefix);
            if (cluster.preferredGroupCoordinator(candidate).id() == node) {
                return candidate;
            }
        }
        throw new IllegalStateException("no application id coordinated by node " + node);
    }

    /**
     * {@code spec} run in {@code netns} under {@code uid} (after {@code more}, e.g. faketime, in its command), with
     * this run's {@link LeaseSwitch} flags, its state directory given to {@code uid}.
     */
    static Stamper underUid(Stamper spec, Netns netns, int uid, List<String> more) throws Exception {
        List<String> prefix = new ArrayList<>(netns.execAs(uid));
        prefix.addAll(more);
        Stamper stamper = spec.withPrefix(prefix);
        for (String arg : LeaseSwitch.jvmArgs()) {
            stamper = stamper.withJvmArg(arg);
        }
        Netns.chown(stamper.stateDir(), uid);
        return stamper;
    }

    /** Waits (bounded) until every instance reports that it stamps and holds a lease of its own. */
    static void awaitStamping(Map<String, ChildJvm> instances, String inputTopic) throws Exception {
        for (Map.Entry<String, ChildJvm> instance : instances.entrySet()) {
            instance.getValue().awaitOutput(Stamper.STARTED + inputTopic, 180);
            instance.getValue().awaitLog("taken by " + instance.getKey() + "#", 180);
        }
    }

    /**
     * The changelogs Kafka Streams created for {@code applicationId}: replicas reordered to {@code order} of their
     * partition, preferred leaders elected.
     */
    static void placeChangelogs(KafkaCluster cluster, String applicationId, IntFunction<List<Integer>> order) throws Exception {
        Set<String> names = cluster.admin().listTopics().names().get(60, TimeUnit.SECONDS);
        for (String topic : names) {
            if (topic.startsWith(applicationId + "-")) {
                cluster.reorderReplicas(topic, order);
            }
        }
    }

    /**
     * Waits (bounded by {@code bound}) until every one of {@code partitions} output partitions watched by each of
     * {@code outputs} got a record written at least half a second after this call (or after {@code atLeastSeconds} from
     * now, when later): records that arrived just before it say nothing of a leader moved right before it (a restarted
     * node taking its partitions back), and the next fault would then begin in the middle of that move's stall. Fails
     * with {@code logs} when they do not.
     */
    static void awaitFlowing(Timeline timeline, String what, int atLeastSeconds, Duration bound, Collection<OutputStalls> outputs,
                             int partitions, Callable<String> logs) throws Exception {
        long start = System.nanoTime();
        long since = System.currentTimeMillis() + 500;
        TimeUnit.SECONDS.sleep(atLeastSeconds);
        long deadline = start + bound.toNanos();
        while (!outputs.stream().allMatch(output -> output.everyPartitionSince(since, partitions))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not every partition stamps within " + bound.toSeconds() + " s\n" + logs.call());
            }
            Thread.sleep(100);
        }
        timeline.mark("%s (after %.1f s)", what, (System.nanoTime() - start) / 1e9);
    }

    /** The tasks an instance last reported holding ({@code (tasks: [0, 2])} in its log), or {@code ?}. */
    static String holding(ChildJvm instance) throws Exception {
        String log = instance.stderr();
        int at = log.lastIndexOf("(tasks: ");
        return at < 0 ? "?" : log.substring(at + 8, log.indexOf(')', at));
    }

    /** The last {@code chars} characters of each instance's log, with its name and whether it runs (for a failure message). */
    static String tails(Map<String, ChildJvm> instances, String name, int chars) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<String, ChildJvm> instance : instances.entrySet()) {
            String err = instance.getValue().stderr();
            text.append("--- ").append(name).append(' ').append(instance.getKey()).append(" (alive: ")
                    .append(instance.getValue().isAlive()).append("), last lines ---\n")
                    .append(err.substring(Math.max(0, err.length() - chars))).append('\n');
        }
        return text.toString();
    }
}
