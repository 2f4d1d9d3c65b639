package io.snowstamp.registry;

import io.snowstamp.SnowstampException;
import io.snowstamp.recovery.ChangelogWriter;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
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
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Reads and appends the registry topic: partition 0 of a single-partition topic, read whole from
 * its beginning to the end offset taken when the read starts (judged by position, so compaction
 * gaps cannot stall it). Not thread-safe: one owner at a time (the claimant at start, then the
 * heartbeat thread).
 */
public final class RegistryLog implements AutoCloseable {
    /** Keys starting with this are not claims (reserved for later record kinds): readers skip them. */
    public static final String RESERVED_PREFIX = "_";

    private final String topic;
    private final Duration timeout;
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
     * @param unreadable one line per record that is not a registry record of a known version
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
            admin.close(Duration.ofSeconds(5));
            throw e;
        }
    }

    private RegistryLog(Properties client, String topic, Duration timeout, Admin admin) {
        this.topic = topic;
        this.timeout = timeout;
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
        producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(timeout.toMillis()));
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

    /** Reads the whole registry as it is now. */
    public Snapshot read() {
        String registryId = describe(admin, topic, timeout).topicId().toString();
        seenTopicId = registryId;
        TopicPartition partition = new TopicPartition(topic, 0);
        List<RegistryView.Entry> entries = new ArrayList<>();
        List<String> unreadable = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), timeout).get(partition);
            while (consumer.position(partition, timeout) < end) {
                if (System.nanoTime() > deadline) {
                    throw new SnowstampException("reading the worker registry " + topic + " did not reach its end offset " + end
                            + " within " + timeout.toSeconds() + " s");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    if (record.offset() >= end) {
                        continue;
                    }
                    String key = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
                    if (key.startsWith(RESERVED_PREFIX)) {
                        continue;
                    }
                    if (record.value() == null) {
                        continue;       // a tombstone written by hand: the claim is gone, as after compaction
                    }
                    try {
                        Claim claim = ClaimCodec.decode(record.value());
                        if (!claim.key().equals(key)) {
                            throw new IllegalArgumentException("key " + key + " does not match the record (" + claim.key() + ")");
                        }
                        entries.add(new RegistryView.Entry(record.offset(), record.timestamp(), claim));
                    } catch (IllegalArgumentException e) {
                        unreadable.add("offset " + record.offset() + " (key " + key + "): " + e.getMessage());
                    }
                }
            }
        }
        return new Snapshot(registryId, entries, unreadable);
    }

    /** Appends a record of a claim; returns its offset once every in-sync replica has it. */
    public long append(Claim claim) {
        return send(claim.key(), ClaimCodec.encode(claim));
    }

    private synchronized long send(String key, byte[] value) {
        String seen = seenTopicId;
        if (seen != null && producerTopicId != null && !seen.equals(producerTopicId)) {
            producer.close(Duration.ofSeconds(5));
            producer = new KafkaProducer<>(producerProps);
        }
        if (seen != null) {
            producerTopicId = seen;
        }
        try {
            RecordMetadata metadata = producer.send(new ProducerRecord<>(topic, 0, key.getBytes(StandardCharsets.UTF_8), value))
                    .get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
            return metadata.offset();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new SnowstampException("cannot write to the worker registry " + topic + ": " + e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new SnowstampException("cannot write to the worker registry " + topic + ": no answer from Kafka in "
                    + timeout.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while writing to the worker registry " + topic, e);
        }
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
        producer.close(Duration.ofSeconds(5));
        admin.close(Duration.ofSeconds(5));
    }

}
