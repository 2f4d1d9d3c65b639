package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
     * The registered tags: the newest readable record per tag of the tags topic.
     *
     * @param warnings receives one line per record that cannot be read (it is skipped)
     */
    public static Map<String, TagDefinition> registry(SnowstampConfig config, Duration timeout, Consumer<String> warnings) {
        Map<String, TagDefinition> tags = new TreeMap<>();
        TopicReader.readToEnd(KafkaSettings.consumer(config), config.sequence().tagsTopic(), timeout, record -> {
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

    /** The newest segment of every tag in the changelog of {@code config}'s application id; empty when it does not exist. */
    public static Map<String, TagSegment> segments(SnowstampConfig config, Duration timeout, Consumer<String> warnings) {
        String changelog = SequenceNames.changelogTopic(config.applicationId());
        Map<String, TagSegment> segments = new TreeMap<>();
        try (Admin admin = Admin.create(KafkaSettings.client(config))) {
            if (TopicAdmin.partitions(admin, changelog).isEmpty()) {
                return segments;
            }
        }
        TopicReader.readToEnd(KafkaSettings.consumer(config), changelog, timeout, record -> {
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

    /** Registered tags and tags with a segment, sorted by tag. */
    public static List<Listed> list(SnowstampConfig config, Duration timeout, Consumer<String> warnings) {
        Map<String, TagDefinition> registry = registry(config, timeout, warnings);
        Map<String, TagSegment> segments = segments(config, timeout, warnings);
        Optional<Integer> partitions;
        try (Admin admin = Admin.create(KafkaSettings.client(config))) {
            partitions = TopicAdmin.partitions(admin, config.outputTopic());
        }
        TreeSet<String> tags = new TreeSet<>(registry.keySet());
        tags.addAll(segments.keySet());
        List<Listed> listed = new ArrayList<>();
        for (String tag : tags) {
            listed.add(new Listed(tag, registry.get(tag), segments.get(tag), partitions.map(p -> Tags.partition(tag, p)).orElse(-1)));
        }
        return listed;
    }

    /** Writes one definition to the tags topic and waits for the broker's acknowledgement. */
    public static void write(SnowstampConfig config, String tag, TagDefinition definition) {
        String problem = Tags.problem(tag);
        if (problem != null) {
            throw new SnowstampException("tag '" + tag + "' is invalid: " + problem);
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(KafkaSettings.producer(config))) {
            producer.send(new ProducerRecord<>(config.sequence().tagsTopic(), tag.getBytes(StandardCharsets.UTF_8),
                    DEFINITIONS.serialize(config.sequence().tagsTopic(), definition))).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new SnowstampException("cannot write tag '" + tag + "' to " + config.sequence().tagsTopic() + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new SnowstampException("cannot write tag '" + tag + "' to " + config.sequence().tagsTopic() + ": no answer in 60 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while writing tag '" + tag + "'", e);
        }
    }
}
