package io.snowstamp.registry;

import io.snowstamp.SnowstampException;
import io.snowstamp.recovery.ChangelogWriter;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Reads and appends the registry topic: partition 0 of a single-partition topic, read whole from
 * its beginning to the end offset taken when the read starts (judged by position, so compaction
 * gaps cannot stall it). Every wait of a read or an append ends by a deadline, the timeout after the
 * call unless the caller gives one (a heartbeat gives its own, see {@link LeaseHeartbeat}). Not
 * thread-safe: one owner at a time.
 */
public final class RegistryLog implements AutoCloseable {
    /** Keys starting with this are not claims (reserved for later record kinds): readers skip them. */
    public static final String RESERVED_PREFIX = "_";
    private static final Duration POLL = Duration.ofMillis(200);
    /** The longest each of its clients' close takes (producer, admin): a clean stop's worst case counts them (the Kubernetes grace period). */
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    private final String topic;
    private final Duration timeout;
    /**
     * The longest {@code producer.send} may block (for the topic's metadata): a quarter of the timeout. The only wait
     * a deadline cannot cut short, so a write starts only while it still fits before the deadline.
     */
    private final Duration maxBlock;
    private final Properties consumerProps;
    private final Admin admin;
    private final Properties producerProps;
    /**
     * Replaced when the topic is found recreated: an idempotent producer keeps its sequence numbers for the partition of
     * the deleted topic, which the new one does not know, and its writes were retried until the delivery timeout (a
     * heartbeat that should re-assert the claim within one beat took over 20 s, and a newcomer claimed the workers first).
     */
    private KafkaProducer<byte[], byte[]> producer;
    /** The topic id the producer has written to (null: none yet); the last id a read saw. */
    private String producerTopicId;
    private volatile String seenTopicId;

    /**
     * Everything the registry holds now.
     *
     * @param registryId the topic's id (changes when the topic is deleted and recreated)
     * @param unreadable one line per key whose record is not a registry record of a known version (its first such record),
     *                   unless a later tombstone of the key removed it
     */
    public record Snapshot(String registryId, List<RegistryView.Entry> entries, List<String> unreadable) {
        public RegistryView view() {
            return new RegistryView(entries, registryId);
        }
    }

    /**
     * @param client connection and security settings of a plain client
     * @throws SnowstampException if the topic does not exist (with the {@code topics apply} hint) or has more than one partition
     */
    public static RegistryLog open(Properties client, String topic, Duration timeout) {
        Admin admin = Admin.create(client);
        try {
            describe(admin, topic, timeout);
            return new RegistryLog(client, topic, timeout, admin);
        } catch (RuntimeException e) {
            admin.close(CLOSE_TIMEOUT);
            throw e;
        }
    }

    /** Like {@link #open} without looking at the topic (no wait at all): its first read does. */
    static RegistryLog openUnchecked(Properties client, String topic, Duration timeout) {
        return new RegistryLog(client, topic, timeout, Admin.create(client));
    }

    private RegistryLog(Properties client, String topic, Duration timeout, Admin admin) {
        this.topic = topic;
        this.timeout = timeout;
        this.maxBlock = timeout.dividedBy(4);
        this.admin = admin;
        Properties consumer = new Properties();
        consumer.putAll(client);
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumer.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        this.consumerProps = consumer;
        Properties producerProps = new Properties();
        this.producerProps = producerProps;
        producerProps.putAll(client);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        producerProps.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(maxBlock.toMillis()));
        // the producer gives a record up after the timeout, about when its caller stopped waiting (delivery.timeout.ms
        // may not be below linger.ms + request.timeout.ms: linger is 0, the request timeout at most the delivery timeout)
        producerProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(Math.max(timeout.toMillis(), 1000)));
        producerProps.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(Math.min(timeout.toMillis(), 30_000)));
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        this.producer = new KafkaProducer<>(producerProps);
    }

    private static TopicDescription describe(Admin admin, String topic, Duration timeout) {
        TopicDescription description;
        try {
            description = ChangelogWriter.get(admin.describeTopics(Set.of(topic)).allTopicNames(), timeout,
                    "describe the worker registry topic " + topic).get(topic);
        } catch (SnowstampException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                throw new SnowstampException("worker registry topic " + topic + " does not exist: create it with 'snowstamp topics apply'"
                        + " (file topics/snowstamp-workers.properties) or your own tooling (1 partition, cleanup.policy=compact),"
                        + " or set id.worker-registry=off to manage id.worker-offset by hand");
            }
            throw e;
        }
        if (description.partitions().size() != 1) {
            throw new SnowstampException("worker registry topic " + topic + " has " + description.partitions().size()
                    + " partitions: it needs exactly 1 (the log's order decides between concurrent claims)");
        }
        return description;
    }

    public String topic() {
        return topic;
    }

    /** Reads the whole registry as it is now, within the timeout. */
    public Snapshot read() {
        return read(deadline());
    }

    /**
     * Reads the whole registry as it is now.
     *
     * @param deadline {@link System#nanoTime()} by which every wait has ended: then the read fails
     */
    public Snapshot read(long deadline) {
        String registryId = describe(admin, topic, left(deadline, "read")).topicId().toString();
        seenTopicId = registryId;
        TopicPartition partition = new TopicPartition(topic, 0);
        List<RegistryView.Entry> entries = new ArrayList<>();
        // by key: a tombstone for the key removes it, as compaction would (the way to clear a record written by mistake)
        Map<String, String> unreadable = new LinkedHashMap<>();
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
        try {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), left(deadline, "read")).get(partition);
            // an end offset of a topic deleted meanwhile may never be reached: the deadline ends the read
            while (consumer.position(partition, left(deadline, "reach the end offset " + end + " of")) < end) {
                Duration poll = left(deadline, "reach the end offset " + end + " of");
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(poll.compareTo(POLL) < 0 ? poll : POLL)) {
                    if (record.offset() >= end) {
                        continue;
                    }
                    String key = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
                    if (key.startsWith(RESERVED_PREFIX)) {
                        continue;
                    }
                    if (record.value() == null) {
                        unreadable.remove(key);
                        continue;       // a tombstone written by hand: no claim; it removes an unreadable record of its key, as compaction would
                    }
                    try {
                        Claim claim = ClaimCodec.decode(record.value());
                        if (!claim.key().equals(key)) {
                            throw new IllegalArgumentException("key " + key + " does not match the record (" + claim.key() + ")");
                        }
                        entries.add(new RegistryView.Entry(record.offset(), record.timestamp(), claim));
                    } catch (IllegalArgumentException e) {
                        unreadable.putIfAbsent(key, "offset " + record.offset() + " (key " + key + "): " + e.getMessage());
                    }
                }
            }
        } finally {
            // closing waits for in-flight fetches (30 s by default, seen under a deleted topic): only until the deadline
            consumer.close(CloseOptions.timeout(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))));
        }
        return new Snapshot(registryId, entries, List.copyOf(unreadable.values()));
    }

    /** Appends a record of a claim, within the timeout; returns its offset once every in-sync replica has it. */
    public long append(Claim claim) {
        return append(claim, deadline());
    }

    /**
     * Appends a record of a claim; returns its offset once every in-sync replica has it.
     *
     * @param deadline {@link System#nanoTime()} by which every wait has ended: then the append fails (the record may
     *                 still land later, until the producer's delivery timeout)
     */
    public long append(Claim claim, long deadline) {
        return send(claim.key(), ClaimCodec.encode(claim), deadline);
    }

    private synchronized long send(String key, byte[] value, long deadline) {
        String seen = seenTopicId;
        if (seen != null && producerTopicId != null && !seen.equals(producerTopicId)) {
            // records still waiting in it belong to the deleted topic: dropped, not waited for
            producer.close(Duration.ZERO);
            producer = new KafkaProducer<>(producerProps);
        }
        if (seen != null) {
            producerTopicId = seen;
        }
        if (deadline - System.nanoTime() < maxBlock.toNanos()) {
            throw new SnowstampException("cannot write to the worker registry " + topic + ": less than the "
                    + maxBlock.toMillis() + " ms a write may block left before the deadline");
        }
        try {
            RecordMetadata metadata = producer.send(new ProducerRecord<>(topic, 0, key.getBytes(StandardCharsets.UTF_8), value))
                    .get(left(deadline, "write to").toNanos(), TimeUnit.NANOSECONDS);
            return metadata.offset();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new SnowstampException("cannot write to the worker registry " + topic + ": " + e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new SnowstampException("cannot write to the worker registry " + topic + ": no answer from Kafka in time", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while writing to the worker registry " + topic, e);
        }
    }

    long deadline() {
        return System.nanoTime() + timeout.toNanos();
    }

    /** The time left before {@code deadline}; none left fails the call. */
    private Duration left(long deadline, String what) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SnowstampException("could not " + what + " the worker registry " + topic + " in time");
        }
        return Duration.ofNanos(left);
    }

    /** Changelog topics of the cluster ({@code <application>-worker-state-changelog}), by application. */
    public Set<String> applicationsWithChangelogs(String suffix) {
        Set<String> names = ChangelogWriter.get(admin.listTopics().names(), timeout, "list topics");
        Set<String> apps = new java.util.TreeSet<>();
        for (String name : names) {
            if (name.endsWith(suffix)) {
                apps.add(name.substring(0, name.length() - suffix.length()));
            }
        }
        return apps;
    }

    /** The admin client (consumer groups of the applications). */
    public Admin admin() {
        return admin;
    }

    @Override
    public synchronized void close() {
        producer.close(CLOSE_TIMEOUT);
        admin.close(CLOSE_TIMEOUT);
    }

}
