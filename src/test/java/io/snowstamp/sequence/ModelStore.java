package io.snowstamp.sequence;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * A key-value store for a model that plays the changelog itself: a sorted map that hands every put to {@code logged}, as
 * a logged store hands it to Kafka Streams' producer. What a restore gives is the model's to put in with {@link #restore}.
 */
final class ModelStore<V> implements KeyValueStore<String, V> {
    private final String name;
    private final TreeMap<String, V> entries = new TreeMap<>();
    private final BiConsumer<String, V> logged;

    ModelStore(String name, BiConsumer<String, V> logged) {
        this.name = name;
        this.logged = logged;
    }

    /** The restored state: put without a changelog write. */
    void restore(Map<String, V> restored) {
        entries.putAll(restored);
    }

    @Override
    public void put(String key, V value) {
        entries.put(key, value);
        logged.accept(key, value);
    }

    @Override
    public V putIfAbsent(String key, V value) {
        V old = entries.get(key);
        if (old == null) {
            put(key, value);
        }
        return old;
    }

    @Override
    public void putAll(List<KeyValue<String, V>> all) {
        all.forEach(entry -> put(entry.key, entry.value));
    }

    @Override
    public V delete(String key) {
        throw new UnsupportedOperationException("the sequence processor never deletes");
    }

    @Override
    public V get(String key) {
        return entries.get(key);
    }

    @Override
    public KeyValueIterator<String, V> range(String from, String to) {
        return iterator(entries.subMap(from, true, to, true));
    }

    @Override
    public KeyValueIterator<String, V> all() {
        return iterator(entries);
    }

    private KeyValueIterator<String, V> iterator(Map<String, V> view) {
        List<KeyValue<String, V>> copy = new ArrayList<>();
        view.forEach((key, value) -> copy.add(KeyValue.pair(key, value)));
        Iterator<KeyValue<String, V>> it = copy.iterator();
        return new KeyValueIterator<>() {
            private int next;

            @Override
            public void close() {
            }

            @Override
            public String peekNextKey() {
                return copy.get(next).key;
            }

            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public KeyValue<String, V> next() {
                next++;
                return it.next();
            }
        };
    }

    @Override
    public long approximateNumEntries() {
        return entries.size();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
    }

    @Override
    public void close() {
    }

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public boolean isOpen() {
        return true;
    }
}
