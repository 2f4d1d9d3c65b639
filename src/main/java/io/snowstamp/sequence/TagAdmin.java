package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Tag administration on Kafka alone (Leaf's HTTP API): definitions are records of the compacted
 * tags topic, keyed by tag; the reserved {@code max_id} of each tag is read from the changelog of
 * the {@code sequence-segments} store (read_committed, to its end), so it works whether or not the
 * stamper runs. Read-modify-write without a lock: one administrator at a time.
 */
public final class TagAdmin {
    private static final TagDefinitionSerde DEFINITIONS = new TagDefinitionSerde();
    private static final SequenceStateSerde STATES = new SequenceStateSerde();

    private TagAdmin() {
    }

    /**
     * One tag as {@code tags list} shows it.
     *
     * @param definition the registered definition, or null (auto-created, or its definition was removed)
     * @param segment    the newest segment in the changelog, or null (no record numbered yet)
     * @param partition  output partition of the tag, -1 when the output topic does not exist
     */
    public record Listed(String tag, TagDefinition definition, TagSegment segment, int partition) {
    }

    /**
     * The registered tags: the newest readable record per tag of {@code tagsTopic}; empty when the
     * topic does not exist.
     *
     * @param consumerProps a group-less, read_committed byte-array consumer's settings
     * @param warnings      receives one line per record that cannot be read (it is skipped)
     */
    public static Map<String, TagDefinition> registry(Properties consumerProps, String tagsTopic, Duration timeout,
                                                      Consumer<String> warnings) {
        Map<String, TagDefinition> tags = new TreeMap<>();
        if (!exists(consumerProps, tagsTopic, timeout)) {
            return tags;
        }
        TopicReader.readToEnd(consumerProps, tagsTopic, timeout, record -> {
            if (record.key() == null) {
                return;
            }
            String tag = new String(record.key(), StandardCharsets.UTF_8);
            if (record.value() == null) {
                tags.remove(tag);
                return;
            }
            try {
                tags.put(tag, DEFINITIONS.deserialize(record.topic(), record.value()));
            } catch (SerializationException e) {
                warnings.accept("skipped " + record.topic() + "-" + record.partition() + "@" + record.offset() + " (tag '" + tag
                        + "'): " + e.getMessage());
            }
        });
        return tags;
    }

    /**
     * The newest segment of every tag in the changelog of the {@code sequence-segments} store
     * ({@link SequenceNames#changelogTopic}); empty when the topic does not exist.
     */
    public static Map<String, TagSegment> segments(Properties consumerProps, String changelogTopic, Duration timeout,
                                                   Consumer<String> warnings) {
        Map<String, TagSegment> segments = new TreeMap<>();
        if (!exists(consumerProps, changelogTopic, timeout)) {
            return segments;
        }
        TopicReader.readToEnd(consumerProps, changelogTopic, timeout, record -> {
            if (record.key() == null || record.value() == null) {
                return;
            }
            String key = new String(record.key(), StandardCharsets.UTF_8);
            try {
                if (STATES.deserialize(record.topic(), record.value()) instanceof TagSegment segment) {
                    segments.put(key, segment);
                }
            } catch (SerializationException e) {
                warnings.accept("skipped " + record.topic() + "-" + record.partition() + "@" + record.offset() + ": " + e.getMessage());
            }
        });
        return segments;
    }

    private static boolean exists(Properties consumerProps, String topic, Duration timeout) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            return !TopicReader.partitions(consumer, topic, timeout).isEmpty();
        }
    }

    /**
     * Registered tags and tags with a segment, sorted by tag.
     *
     * @param outputPartitions partition count of the output topic, or -1 when unknown
     */
    public static List<Listed> list(Map<String, TagDefinition> registry, Map<String, TagSegment> segments, int outputPartitions) {
        TreeSet<String> tags = new TreeSet<>(registry.keySet());
        tags.addAll(segments.keySet());
        List<Listed> listed = new ArrayList<>();
        for (String tag : tags) {
            listed.add(new Listed(tag, registry.get(tag), segments.get(tag), outputPartitions > 0 ? Tags.partition(tag, outputPartitions) : -1));
        }
        return listed;
    }

    /** Writes one definition to {@code tagsTopic} and waits for the broker's acknowledgement. */
    public static void write(Properties producerProps, String tagsTopic, String tag, TagDefinition definition) {
        String problem = Tags.problem(tag);
        if (problem != null) {
            throw new SnowstampException("tag '" + tag + "' is invalid: " + problem);
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            producer.send(new ProducerRecord<>(tagsTopic, tag.getBytes(StandardCharsets.UTF_8),
                    DEFINITIONS.serialize(tagsTopic, definition))).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new SnowstampException("cannot write tag '" + tag + "' to " + tagsTopic + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new SnowstampException("cannot write tag '" + tag + "' to " + tagsTopic + ": no answer in 60 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while writing tag '" + tag + "'", e);
        }
    }
}
