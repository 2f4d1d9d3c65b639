package io.snowstamp.runtime;

import io.snowstamp.config.ConfigException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.TopicSettings;
import io.snowstamp.recovery.Replication;
import io.snowstamp.stream.DeadLetterHandler;
import io.snowstamp.stream.WriteFailureHandler;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;

import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The Kafka boundary: turns the {@link ConnectionSettings} slice into client {@link Properties}. Every
 * {@code kafka.*} key passes through (SASL, SSL, tuning), except the few snowstamp manages itself,
 * which are refused with the key to use instead.
 */
public final class KafkaSettings {
    /** Streams keys owned by snowstamp keys; setting them through kafka.* would bypass validation. */
    private static final Map<String, String> MANAGED = Map.of(
            StreamsConfig.APPLICATION_ID_CONFIG, "application.id",
            StreamsConfig.PROCESSING_GUARANTEE_CONFIG, "processing.guarantee",
            StreamsConfig.STATE_DIR_CONFIG, "state.dir",
            StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, "dlq.topic",
            StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, "(none: snowstamp's dead-letter handler is required)",
            StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, "(none: a failed write must stop the stamper)");

    private static final Set<String> STREAMS_ONLY_PREFIXES = Set.of("consumer.", "producer.", "admin.",
            "main.consumer.", "restore.consumer.", "global.consumer.");
    /**
     * Keys meant for Kafka Streams that plain clients refuse: {@code group.protocol=streams} (KIP-1071)
     * is invalid for a KafkaConsumer, and snowstamp's own consumers use no group anyway.
     */
    private static final Set<String> STREAMS_ONLY_KEYS = Set.of("group.protocol");

    private KafkaSettings() {
    }

    /** Properties for a plain client (admin, producer, consumer): connection and security keys only matter. */
    public static Properties client(ConnectionSettings connection) {
        Properties props = new Properties();
        connection.kafka().forEach((key, value) -> {
            if (STREAMS_ONLY_PREFIXES.stream().noneMatch(key::startsWith) && !STREAMS_ONLY_KEYS.contains(key)) {
                props.setProperty(key, value);
            }
        });
        Tuning.noMetricsPush(props, connection);
        return props;
    }

    /** A plain producer of byte arrays, idempotent, acks=all. */
    public static Properties producer(ConnectionSettings connection) {
        Properties props = client(connection);
        props.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return props;
    }

    /** A group-less byte-array consumer reading committed data only. */
    public static Properties consumer(ConnectionSettings connection) {
        Properties props = client(connection);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return props;
    }

    /**
     * Properties for the stamper's KafkaStreams instance: {@link #streamsUntuned} plus snowstamp's tuning and
     * {@link SmallRocksDb} for its RocksDB store, unless {@code kafka.rocksdb.config.setter} names another.
     */
    public static Properties streams(ConnectionSettings connection, TopicSettings topics) {
        Properties props = streamsUntuned(connection, topics);
        Tuning.apply(props, connection);
        props.putIfAbsent(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SmallRocksDb.class.getName());
        return props;
    }

    /**
     * {@link #streams} for an output topic of {@code outputPartitions}: the producer's batches sized to the partitions it
     * writes ({@link Tuning#sizeBatches}).
     */
    public static Properties streams(ConnectionSettings connection, TopicSettings topics, int outputPartitions) {
        Properties props = streams(connection, topics);
        Tuning.sizeBatches(props, connection, outputPartitions);
        return props;
    }

    /** Streams' key for the replication factor of the topics it creates. */
    static final String REPLICATION_FACTOR = StreamsConfig.REPLICATION_FACTOR_CONFIG;
    /** {@code min.insync.replicas} of every topic Kafka Streams creates ({@code topic.} prefix: a default for internal topics). */
    static final String INTERNAL_MIN_INSYNC = StreamsConfig.topicPrefix(Replication.MIN_INSYNC_REPLICAS);

    /**
     * The replication of the topics Kafka Streams creates (the worker-state changelog; in sequence
     * mode also the segments changelog and the repartition topic). Kafka Streams' default
     * {@code replication.factor=-1} leaves it to the broker's {@code default.replication.factor},
     * which Kafka ships as 1: on a three-broker cluster the changelog, whose marks keep IDs unique,
     * would live on one disk. So the stamper asks for {@code cluster}'s choice, with the
     * {@code min.insync.replicas} that goes with the factor as a default for internal topics.
     * {@code kafka.replication.factor} and {@code kafka.topic.min.insync.replicas} win; a given
     * factor of -1 (the broker's default) gets no minimum from snowstamp.
     *
     * @return what the internal topics get, for the start-up log
     */
    static String internalTopics(Properties props, ConnectionSettings connection, Replication cluster) {
        Map<String, String> given = connection.kafka();
        Replication effective = cluster;
        String factor = given.get(REPLICATION_FACTOR);
        if (factor == null) {
            props.put(REPLICATION_FACTOR, Short.toString(cluster.factor()));
        } else {
            short parsed;
            try {
                parsed = Short.parseShort(factor.trim());
            } catch (NumberFormatException e) {
                throw new ConfigException("kafka." + REPLICATION_FACTOR, factor, "-1 (the broker's default) or 1..32");
            }
            if (parsed == -1) {
                effective = null;
            } else if (parsed >= 1 && parsed <= 32) {
                effective = Replication.forFactor(parsed);
            } else {
                throw new ConfigException("kafka." + REPLICATION_FACTOR, factor, "-1 (the broker's default) or 1..32");
            }
        }
        if (given.containsKey(INTERNAL_MIN_INSYNC)) {
            return "replication.factor=" + props.get(REPLICATION_FACTOR) + " " + Replication.MIN_INSYNC_REPLICAS + "="
                    + given.get(INTERNAL_MIN_INSYNC) + " (from kafka.* settings)";
        }
        if (effective == null) {
            return "replication.factor=broker-default (from kafka." + REPLICATION_FACTOR + ")";
        }
        props.put(INTERNAL_MIN_INSYNC, Integer.toString(effective.minInsyncReplicas()));
        return effective.describe() + (factor == null ? "" : " (from kafka." + REPLICATION_FACTOR + ")");
    }

    /** The stamper's Streams properties on Kafka Streams' own defaults (benchmark baselines). */
    public static Properties streamsUntuned(ConnectionSettings connection, TopicSettings topics) {
        Properties props = new Properties();
        connection.kafka().forEach((key, value) -> {
            String owner = MANAGED.get(key);
            if (owner != null) {
                throw new ConfigException("kafka." + key + "=" + value + " is invalid: accepted nothing here, set "
                        + owner + " instead");
            }
            props.setProperty(key, value);
        });
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, connection.applicationId());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, connection.processingGuarantee().toString());
        props.put(StreamsConfig.STATE_DIR_CONFIG, connection.stateDir().resolve(connection.instanceId()).toAbsolutePath().toString());
        props.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, topics.dlq());
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterHandler.class.getName());
        props.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, WriteFailureHandler.class.getName());
        // there is no global store; enabling the handler there too is what Kafka 5.0 will default to
        props.putIfAbsent("processing.exception.handler.global.enabled", "true");
        props.putIfAbsent(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        props.putIfAbsent(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        props.putIfAbsent(StreamsConfig.CLIENT_ID_CONFIG, connection.applicationId() + "-" + connection.instanceId());
        return props;
    }
}
