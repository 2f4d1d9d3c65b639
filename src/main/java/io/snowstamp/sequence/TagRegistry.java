package io.snowstamp.sequence;

import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.Set;

/**
 * The registered tags, as the global store over the tags topic holds them (raw bytes, so that a
 * record someone else wrote there can never stop the stamper): a definition that does not parse
 * counts as not registered, with one WARN per tag.
 */
final class TagRegistry {
    private static final Logger log = LoggerFactory.getLogger(TagRegistry.class);
    private static final int MAX_WARNED = 1000;

    private final KeyValueStore<String, byte[]> store;
    private final TagDefinitionSerde serde = new TagDefinitionSerde();
    private final Set<String> warned = new HashSet<>();

    TagRegistry(KeyValueStore<String, byte[]> store) {
        this.store = store;
    }

    /** The tag's registered definition, or null. */
    TagDefinition get(String tag) {
        byte[] bytes = store.get(tag);
        if (bytes == null) {
            return null;
        }
        try {
            return serde.deserialize(null, bytes);
        } catch (SerializationException e) {
            if (warned.size() < MAX_WARNED && warned.add(tag)) {
                log.warn("tags topic: the definition of tag '{}' is unreadable ({}); the tag counts as not registered",
                        tag, e.getMessage());
            }
            return null;
        }
    }

    /** Keeps the global store equal to the tags topic: the newest record per tag, a tombstone removes it. */
    static final class Updater implements Processor<String, byte[], Void, Void> {
        private KeyValueStore<String, byte[]> store;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore(SequenceNames.TAGS_STORE);
        }

        @Override
        public void process(Record<String, byte[]> record) {
            if (record.key() == null) {
                return;
            }
            if (record.value() == null) {
                store.delete(record.key());
            } else {
                store.put(record.key(), record.value());
            }
        }
    }
}
