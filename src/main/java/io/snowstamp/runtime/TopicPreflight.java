package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.Replication;
import io.snowstamp.stream.Names;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The topic checks the stamper makes before Kafka Streams starts, so a missing or misaligned topic
 * stops startup with one line instead of a stream thread dying later.
 */
final class TopicPreflight {
    private static final Logger log = LoggerFactory.getLogger(TopicPreflight.class);

    private TopicPreflight() {
    }

    /**
     * What start-up learned about the cluster.
     *
     * @param outputPartitions the output topic's partition count
     * @param replication      what the cluster can give the topics Kafka Streams creates
     */
    record Checked(int outputPartitions, Replication replication) {
    }

    /**
     * Checks the input, output and dead-letter topics (and, in sequence mode, the tags topic), and
     * warns when the worker-state changelog exists with fewer replicas than the cluster can give.
     */
    static Checked check(SnowstampConfig config) {
        boolean sequence = config.idMode() == SnowstampConfig.IdMode.SEQUENCE;
        try (Admin admin = Admin.create(KafkaSettings.client(config.connection()))) {
            int outputPartitions = sequence ? sequenceTopics(admin, config) : snowflakeTopics(admin, config);
            if (TopicAdmin.partitions(admin, config.topics().dlq()).isEmpty()) {
                throw new SnowstampException("dead-letter topic " + config.topics().dlq()
                        + " does not exist: create it with 'snowstamp topics apply' or your own tooling");
            }
            String appId = config.connection().applicationId();
            refuseDeletePolicy(admin, sequence ? io.snowstamp.sequence.SequenceNames.changelogTopic(appId) : Names.changelogTopic(appId));
            Replication replication = Replication.of(admin, Preflight.LIMIT);
            if (!sequence) {
                warnIfUnderReplicated(admin, Names.changelogTopic(config.connection().applicationId()), replication);
                followGrownInput(admin, config.connection().applicationId() + "-" + Names.PENDING_STORE + "-changelog", outputPartitions);
            }
            return new Checked(outputPartitions, replication);
        }
    }

    /**
     * The changelog of the records set aside ({@code pending-records}) follows an input that grew: Kafka Streams refuses a
     * changelog with fewer partitions than the input, and this one is snowstamp's own. Safe to grow: partition p holds only
     * task p's records, so the new partitions belong to new tasks and start empty. (The worker-state changelog is the
     * operator's to grow, with the input and the output: id-spaces.md.)
     */
    private static void followGrownInput(Admin admin, String changelog, int partitions) {
        TopicAdmin.partitions(admin, changelog).filter(existing -> existing < partitions).ifPresent(existing -> {
            try {
                admin.createPartitions(java.util.Map.of(changelog, org.apache.kafka.clients.admin.NewPartitions.increaseTo(partitions)))
                        .all().get(60, java.util.concurrent.TimeUnit.SECONDS);
                awaitPartitions(admin, changelog, partitions);
                log.info("changelog {} grown from {} to {} partitions with the input", changelog, existing, partitions);
            } catch (Exception e) {
                throw new SnowstampException("cannot grow changelog " + changelog + " from " + existing + " to " + partitions
                        + " partitions with the input (" + e.getMessage() + "): grow it as the input, or delete it with the"
                        + " stamper stopped (it holds only records waiting to be stamped: none after a clean stop)", e);
            }
        });
    }

    /**
     * Until the brokers' metadata shows the grown partitions: the controller has committed the growth when the request
     * returns, the brokers follow a moment later, and Kafka Streams' first rebalance, reading the old count, refused the
     * changelog ("invalid partitions") under load (WorkerRegistryIT's growth test in the CI run). Bounded: 30 s.
     */
    private static void awaitPartitions(Admin admin, String topic, int partitions) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (TopicAdmin.partitions(admin, topic).orElse(0) < partitions && System.nanoTime() - deadline < 0) {
            Thread.sleep(100);
        }
    }

    /**
     * The changelog of the state IDs and numbers resume from must be compacted only: with {@code delete} in its cleanup
     * policy (a topic made by hand, or altered) retention removes the newest record of a key that is not written for a
     * while — a quiet partition's lease and high-water mark, a quiet tag's segment — and the next owner resumes below
     * what was issued. Kafka Streams creates it compacted and does not check an existing one.
     */
    private static void refuseDeletePolicy(Admin admin, String changelog) {
        if (TopicAdmin.partitions(admin, changelog).isEmpty()) {
            return;
        }
        org.apache.kafka.clients.admin.ConfigEntry policy = TopicAdmin.configs(admin, changelog).get("cleanup.policy");
        if (policy != null && policy.value() != null && policy.value().contains("delete")) {
            throw new SnowstampException("changelog " + changelog + " has cleanup.policy=" + policy.value() + "; accepted:"
                    + " compact (retention would delete the newest state of a quiet partition or tag, and IDs would be issued"
                    + " again): kafka-configs.sh --alter --entity-type topics --entity-name " + changelog
                    + " --add-config cleanup.policy=compact");
        }
    }

    /** An existing changelog keeps the replicas it was created with: say so when the cluster could give more. */
    private static void warnIfUnderReplicated(Admin admin, String changelog, Replication cluster) {
        TopicAdmin.replicas(admin, changelog).filter(replicas -> replicas < cluster.factor()).ifPresent(replicas ->
                log.warn("changelog {} has {} replica(s) but the cluster can give {} ({}): an existing topic keeps its replicas;"
                        + " add them with kafka-reassign-partitions.sh and set min.insync.replicas={} (see operations.md, Replication)",
                        changelog, replicas, cluster.factor(), cluster.why(), Replication.minInsyncFor(cluster.factor())));
    }

    /** Snowflake mode: input and output aligned partition by partition, every worker within the layout. */
    private static int snowflakeTopics(Admin admin, SnowstampConfig config) {
        int partitions = TopicAdmin.checkAligned(admin, config.topics().input(), config.topics().output());
        long highestWorker = config.ids().workerFor(partitions - 1);
        if (highestWorker > config.ids().layout().maxWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, config.ids().workerOffset(),
                    "at most " + (config.ids().layout().maxWorker() - partitions + 1) + " for " + partitions
                            + " partitions: worker = offset + partition must fit " + config.ids().layout().workerBits() + " worker bits");
        }
        return partitions;
    }

    /** Sequence mode: input and output may differ in partitions (records are repartitioned by tag); the tags topic must exist. */
    private static int sequenceTopics(Admin admin, SnowstampConfig config) {
        for (String topic : List.of(config.topics().input(), config.sequence().tagsTopic())) {
            if (TopicAdmin.partitions(admin, topic).isEmpty()) {
                throw new SnowstampException("topic " + topic + " does not exist: create it with 'snowstamp topics apply'"
                        + " (files in topics/) or your own tooling");
            }
        }
        int partitions = TopicAdmin.partitions(admin, config.topics().output()).orElseThrow(() -> new SnowstampException("topic "
                + config.topics().output() + " does not exist: create it with 'snowstamp topics apply' (files in topics/) or your own tooling"));
        refuseCompactedOutput(admin, config);
        return partitions;
    }

    /**
     * Sequence mode reads the output partition to learn the numbers issued since the last checkpoint (under exactly-once
     * nothing else holds them): compaction, which keeps one record per key, can drop a tag's highest number, and the next
     * start would issue it again. Not read without the tail guard.
     */
    private static void refuseCompactedOutput(Admin admin, SnowstampConfig config) {
        String output = config.topics().output();
        if (!config.recovery().tailGuard()) {
            return;
        }
        org.apache.kafka.clients.admin.ConfigEntry policy;
        try {
            policy = TopicAdmin.configs(admin, output).get("cleanup.policy");
        } catch (SnowstampException e) {
            if (!(e.getCause() instanceof org.apache.kafka.common.errors.AuthorizationException)) {
                throw e;
            }
            // the documented ACLs give the output READ and WRITE, not DESCRIBE_CONFIGS: the check is the operator's then
            log.warn("cannot read the cleanup.policy of output topic {} (no DESCRIBE_CONFIGS): make sure it is delete, not"
                    + " compact (compaction can drop a tag's highest number, which the next start reads there)", output);
            return;
        }
        if (policy != null && policy.value() != null && policy.value().contains("compact")) {
            throw new SnowstampException("output topic " + output + " has cleanup.policy=" + policy.value() + "; accepted in"
                    + " sequence mode: delete (compaction can drop a tag's highest number, which the next start reads there):"
                    + " kafka-configs.sh --alter --entity-type topics --entity-name " + output + " --add-config cleanup.policy=delete");
        }
    }
}
