package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Writes worker states into an application's changelog the way Kafka Streams would: key = the
 * partition as a 4-byte int, value = {@link WorkerStateSerde}, into changelog partition = key
 * (Kafka Streams restores task p from changelog partition p). Creates the topic, compacted, when
 * it does not exist. The stamper reads the changelog {@code read_committed}; records of this
 * plain idempotent producer are committed as soon as they are acknowledged.
 */
public final class ChangelogWriter {
    private static final WorkerStateSerde SERDE = new WorkerStateSerde();

    /**
     * Topic configs of a state changelog, whoever creates it (Kafka Streams or this class). Compacted,
     * never a tombstone written. A new segment every 10 minutes: only closed segments are compacted, and
     * a partition's next owner restores all that is not, and the lease reads it too (Kafka's default
     * segment, 7 days of a busy partition's reservations and commit markers, passes a million offsets; a
     * million records took 4 s to restore on a 2-core machine, time a failover would add to the session
     * timeout). An hour was too long with many busy partitions: after 13 minutes at 10,000 records/s over
     * 1,024 partitions the changelog held 2.7 million offsets, of which a restore from the start read
     * 383,000 records with 10-minute segments and every record of the hour so far with hourly ones.
     */
    public static final Map<String, String> TOPIC_CONFIGS = Map.of("cleanup.policy", "compact", "segment.ms", "600000");

    private ChangelogWriter() {
    }

    /**
     * Creates {@code topic} ({@link #TOPIC_CONFIGS}, the {@link Replication} the cluster can give,
     * as Kafka Streams would create it from the stamper's settings) with {@code partitions}
     * partitions unless it exists; an existing topic must have that many.
     *
     * @return the replication it was created with; empty when it existed
     */
    public static Optional<Replication> ensureTopic(Admin admin, String topic, int partitions, Duration timeout) {
        Optional<Integer> existing = partitionCount(admin, topic, timeout);
        if (existing.isPresent()) {
            if (existing.get() != partitions) {
                throw new SnowstampException("changelog topic " + topic + " has " + existing.get() + " partitions but the input"
                        + " topic has " + partitions + ": Kafka Streams needs them equal (delete the changelog and import again)");
            }
            return Optional.empty();
        }
        Replication replication = Replication.of(admin, timeout);
        Map<String, String> configs = new java.util.HashMap<>(TOPIC_CONFIGS);
        configs.putAll(replication.topicConfigs());
        NewTopic newTopic = new NewTopic(topic, Optional.of(partitions), Optional.of(replication.factor())).configs(configs);
        try {
            get(admin.createTopics(Set.of(newTopic)).all(), timeout, "create changelog topic " + topic);
        } catch (SnowstampException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (partitionCount(admin, topic, timeout).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new SnowstampException("changelog topic " + topic + " was created but is not visible after "
                        + timeout.toSeconds() + " s");
            }
            sleep(50);
        }
        awaitLeaders(admin, topic, partitions, timeout);
        return Optional.of(replication);
    }

    /**
     * Returns once every partition of a topic just created takes writes. A created topic reaches
     * every broker's metadata a moment later, and its leaders open their partitions a moment after
     * that. Producing into that second window loses records despite idempotence (KAFKA-15591, open
     * in Kafka 4.3: a batch refused with NOT_LEADER_OR_FOLLOWER is overtaken by the next one and then
     * retried with OUT_OF_ORDER_SEQUENCE_NUMBER until it expires); seen with 64 partitions on the
     * embedded broker, and as NOT_LEADER_OR_FOLLOWER retries of the seeds {@code recover} writes into
     * a changelog it created. ListOffsets is answered only by a partition's open leader (the admin
     * client retries until then), so once it answers for every partition, every partition takes writes.
     * On a cluster the brokers learn of the topic one by one: one that has not yet answers the admin
     * client's metadata request with "unknown topic", which the admin client does not retry (seen with
     * 1,024 partitions on three brokers); that answer is asked again here until {@code timeout}.
     */
    public static void awaitLeaders(Admin admin, String topic, int partitions, Duration timeout) {
        Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
        for (int partition = 0; partition < partitions; partition++) {
            latest.put(new TopicPartition(topic, partition), OffsetSpec.latest());
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            try {
                get(admin.listOffsets(latest).all(), left, "find the leaders of the partitions of the new topic " + topic);
                return;
            } catch (SnowstampException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                sleep(100);
            }
        }
    }

    /** Partition count of a topic, empty when it does not exist. */
    public static Optional<Integer> partitionCount(Admin admin, String topic, Duration timeout) {
        try {
            Map<String, TopicDescription> topics = get(admin.describeTopics(Set.of(topic)).allTopicNames(), timeout,
                    "describe topic " + topic);
            return Optional.of(topics.get(topic).partitions().size());
        } catch (SnowstampException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Writes one record per state and waits until every one is acknowledged by all in-sync replicas.
     * Each state is written with {@code writtenAt} = this writer's wall clock now (the audit trail
     * says when the import or recover wrote it, whatever the state carried before).
     *
     * @param producerProps connection settings; acks=all and idempotence are forced
     */
    public static void write(Properties producerProps, String topic, Map<Integer, WorkerState> states, Duration timeout) {
        Properties props = new Properties();
        props.putAll(producerProps);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        props.remove(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
        props.remove(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "snowstamp-changelog-writer");
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        long now = System.currentTimeMillis();
        try (IntegerSerializer keys = new IntegerSerializer();
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            states.forEach((partition, state) -> sent.add(producer.send(new ProducerRecord<>(topic, partition,
                    keys.serialize(topic, partition), SERDE.serialize(topic, state.withWrittenAt(now))))));
            producer.flush();
            for (Future<RecordMetadata> future : sent) {
                future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (ExecutionException e) {
            throw new SnowstampException("cannot write to " + topic + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new SnowstampException("cannot write to " + topic + ": not acknowledged within " + timeout.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while writing to " + topic, e);
        }
    }

    public static <T> T get(KafkaFuture<T> future, Duration timeout, String what) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new SnowstampException("cannot " + what + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new SnowstampException("cannot " + what + ": no answer from Kafka in " + timeout.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while trying to " + what, e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted", e);
        }
    }
}
