package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.StateNames;
import org.apache.kafka.clients.admin.Admin;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * {@code changelog import} without its printing: every check against the cluster, then the
 * {@link ImportPlan}, then the write. {@link #prepare} reads only and refuses (throws) before anything is
 * written; {@link #write} writes exactly {@link ImportPlan#writes()}. Split in two so a dry run (and
 * the report printed before a real write) sees the same checks and the same plan as the write.
 */
public final class StateImport {
    private final Admin admin;
    private final Properties consumer;
    private final Properties producer;
    private final Duration timeout;

    /**
     * What the import will do, decided before writing.
     *
     * @param topic         the target changelog
     * @param partitions    partition count of the input topic (= of the changelog)
     * @param topicExists   false when the changelog will be created (compacted, {@code partitions} partitions)
     * @param activeMembers members of the application's group now: empty unless this is a dry run
     */
    public record Prepared(String topic, int partitions, boolean topicExists, List<String> activeMembers, ImportPlan plan) {
        public Prepared {
            activeMembers = List.copyOf(activeMembers);
        }
    }

    /**
     * @param admin    a client of the target cluster (not closed here)
     * @param consumer consumer properties of the target cluster, to replay its changelog
     * @param producer producer properties of the target cluster (transactional writes)
     * @param timeout  for every call to the cluster
     */
    public StateImport(Admin admin, Properties consumer, Properties producer, Duration timeout) {
        this.admin = admin;
        this.consumer = consumer;
        this.producer = producer;
        this.timeout = timeout;
    }

    /**
     * Checks the cluster and plans the import of {@code file} into the changelog of {@code applicationId}.
     *
     * @param workerOffset {@code id.worker-offset}: partition p has worker {@code workerOffset + p}
     * @param dryRun       when false, an application with active members is refused (a running stamper
     *                     would overwrite the import, or issue IDs below it); a dry run lists them instead
     * @throws ImportRefusedException if the import could let an ID be issued twice
     * @throws SnowstampException     if the topics do not fit (missing input topic, partition counts differ)
     */
    public Prepared prepare(StateFile file, String applicationId, String inputTopic, IdLayout layout, long workerOffset,
                            boolean dryRun) {
        String topic = StateNames.changelogTopic(applicationId);
        int partitions = inputPartitions(admin, inputTopic, timeout);
        List<String> members = ApplicationGroup.activeMembers(admin, applicationId, timeout);
        if (!dryRun) {
            ApplicationGroup.requireStopped(members, applicationId, "importing worker state");
        }
        Optional<Integer> existing = ChangelogWriter.partitionCount(admin, topic, timeout);
        if (existing.isPresent() && existing.get() != partitions) {
            throw new SnowstampException("changelog topic " + topic + " has " + existing.get() + " partitions but input topic "
                    + inputTopic + " has " + partitions + ": Kafka Streams needs them equal");
        }
        Map<Integer, WorkerState> current = existing.isPresent()
                ? ChangelogReader.latestOrNone(consumer, applicationId, timeout) : Map.of();
        ImportPlan plan = ImportPlan.plan(file, current, layout, workerOffset, partitions, topic);
        return new Prepared(topic, partitions, existing.isPresent(), members, plan);
    }

    /** Creates the changelog if missing and writes the plan's states; returns how many partitions were written. */
    public int write(Prepared prepared) {
        Map<Integer, WorkerState> writes = prepared.plan().writes();
        if (writes.isEmpty()) {
            return 0;
        }
        ChangelogWriter.ensureTopic(admin, prepared.topic(), prepared.partitions(), timeout);
        ChangelogWriter.write(producer, prepared.topic(), writes, timeout);
        return writes.size();
    }

    /** Partition count of the input topic: the changelog must have as many. */
    public static int inputPartitions(Admin admin, String inputTopic, Duration timeout) {
        return ChangelogWriter.partitionCount(admin, inputTopic, timeout).orElseThrow(() -> new SnowstampException(
                "input topic " + inputTopic + " does not exist on this cluster: create the topics first ('snowstamp "
                        + "topics apply'); the changelog gets as many partitions as the input topic"));
    }
}
