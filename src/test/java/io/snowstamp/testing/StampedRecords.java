package io.snowstamp.testing;

import io.snowstamp.recovery.TopicReader;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The committed records of a stamped topic, reduced to what fault tests look at. */
public final class StampedRecords {
    private static final Pattern NUMBER = Pattern.compile("\"n\":(\\d+)");

    private StampedRecords() {
    }

    /**
     * One output record.
     *
     * @param id the {@code snowstamp-id} header, or -1 without one
     * @param n  the {@link NumberedProducer} number in the value, or -1 when the value has none
     * @param source the {@code snowstamp-src} header ({@code topic/partition/offset}), or null without one
     */
    public record Stamped(int partition, long offset, long id, long n, String source) {
    }

    /** Properties of a group-less byte-array consumer reading committed records only (for {@link TopicReader}). */
    public static Properties committedReader(String bootstrapServers) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }

    /** The keys of {@code changelog} whose newest record is not a tombstone: the store entries not deleted. */
    public static List<String> undeleted(String bootstrapServers, String changelog) {
        Map<String, Boolean> held = new TreeMap<>();
        TopicReader.readToEnd(committedReader(bootstrapServers), changelog, Duration.ofSeconds(30),
                record -> held.put(Arrays.toString(record.key()), record.value() != null));
        return held.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).toList();
    }

    /** Reads {@code topic} read_committed up to its current end, in offset order per partition. */
    public static List<Stamped> read(String bootstrapServers, String topic) {
        List<Stamped> records = new ArrayList<>();
        TopicReader.readToEnd(committedReader(bootstrapServers), topic, Duration.ofSeconds(60), record -> {
            Header header = record.headers().lastHeader(IdHeader.ID);
            long id = header == null ? -1 : Long.parseLong(new String(header.value(), StandardCharsets.US_ASCII));
            long n = -1;
            if (record.value() != null) {
                Matcher m = NUMBER.matcher(new String(record.value(), StandardCharsets.UTF_8));
                if (m.find()) {
                    n = Long.parseLong(m.group(1));
                }
            }
            Header source = record.headers().lastHeader(IdHeader.SOURCE);
            records.add(new Stamped(record.partition(), record.offset(), id, n,
                    source == null ? null : new String(source.value(), StandardCharsets.UTF_8)));
        });
        return records;
    }
}
