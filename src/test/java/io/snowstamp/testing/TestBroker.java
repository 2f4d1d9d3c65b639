package io.snowstamp.testing;

import io.snowstamp.embedded.EmbeddedKafka;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A real in-process Kafka broker for integration tests, with small helpers around it. */
public final class TestBroker implements AutoCloseable {
    private static final AtomicInteger NAMES = new AtomicInteger();

    private final EmbeddedKafka kafka;
    private final Path dir;

    private TestBroker(EmbeddedKafka kafka, Path dir) {
        this.kafka = kafka;
        this.dir = dir;
    }

    public static TestBroker start() throws Exception {
        return start(Map.of());
    }

    /** A broker with {@code extra} broker properties over the defaults (e.g. short timeouts). */
    public static TestBroker start(Map<String, String> extra) throws Exception {
        Path dir = Files.createTempDirectory("snowstamp-it-broker");
        return new TestBroker(EmbeddedKafka.start(dir, 0, extra), dir);
    }

    public String bootstrapServers() {
        return kafka.bootstrapServers();
    }

    /** A name no other test of this JVM uses. */
    public static String unique(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet() + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
    }

    public void createTopic(String name, int partitions) throws Exception {
        createTopic(bootstrapServers(), name, partitions);
    }

    /** Creates a topic with one replica on any broker (also one running in a child JVM), as {@code topics apply} does: ready for writes. */
    public static void createTopic(String bootstrapServers, String name, int partitions) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            TopicAdmin.apply(admin, List.of(new TopicSpec(name, partitions, (short) 1, Map.of())));
        }
    }

    /** Deletes a topic and waits until the broker no longer lists it (any broker). */
    public static void deleteTopic(String bootstrapServers, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            admin.deleteTopics(Set.of(topic)).all().get(60, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("topic " + topic + " still listed 60 s after its deletion");
                }
                Thread.sleep(100);
            }
        }
    }

    /** The offsets consumer group {@code group} has committed on {@code topic}, per partition (partitions without one left out). */
    public static Map<Integer, Long> committedOffsets(String bootstrapServers, String group, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            Map<Integer, Long> committed = new java.util.TreeMap<>();
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).forEach((partition, offset) -> {
                if (offset != null && partition.topic().equals(topic)) {
                    committed.put(partition.partition(), offset.offset());
                }
            });
            return committed;
        }
    }

    /** Waits until {@code group}'s committed offsets on {@code topic} add up to at least {@code total}; fails after {@code timeout}. */
    public static void awaitCommitted(String bootstrapServers, String group, String topic, long total, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<Integer, Long> committed = committedOffsets(bootstrapServers, group, topic);
        while (committed.values().stream().mapToLong(Long::longValue).sum() < total) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("group " + group + " committed " + committed + " on " + topic + ", not "
                        + total + " offsets, within " + timeout.toSeconds() + " s");
            }
            Thread.sleep(100);
            committed = committedOffsets(bootstrapServers, group, topic);
        }
    }

    /** One effective config of a topic, with where its value comes from (the topic itself, or a broker default). */
    public static ConfigEntry topicConfig(String bootstrapServers, String topic, String key) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            return admin.describeConfigs(Set.of(resource)).all().get(60, TimeUnit.SECONDS).get(resource).get(key);
        }
    }

    public KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    /** Produces {@code count} small JSON values numbered from {@code first}, keys spread over 100 users. */
    public void produce(String topic, long first, long count) {
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (long n = first; n < first + count; n++) {
                byte[] key = ("user-" + (n % 100)).getBytes(StandardCharsets.UTF_8);
                byte[] value = ("{\"n\":" + n + ",\"kind\":\"test\"}").getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, key, value));
            }
            producer.flush();
        }
    }

    /** Reads {@code topic} read_committed from the beginning until {@code expected} records or the timeout. */
    public List<ConsumerRecord<byte[], byte[]>> consume(String topic, int expected, Duration timeout) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            var partitions = consumer.partitionsFor(topic).stream()
                    .map(info -> new org.apache.kafka.common.TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    @Override
    public void close() throws Exception {
        kafka.close();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}
