package io.snowstamp.sequence;

import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@code sequence-segments} store whose next start finds records another writer's late writes left in the restored
 * state: {@link #landLate} puts them into the store when Kafka Streams opens it, before the task's {@code init} reads it
 * — as a write that landed after a holder's last write of the key and before the next holder's restore ended would be
 * restored (the newest value of its key). What the topology test driver cannot do with a changelog of its own.
 */
final class LateWriteStore implements KeyValueBytesStoreSupplier {
    private final KeyValueBytesStoreSupplier inner;
    private final Map<String, byte[]> pending = new LinkedHashMap<>();

    LateWriteStore(KeyValueBytesStoreSupplier inner) {
        this.inner = inner;
    }

    /** At the store's next opening, {@code key} holds {@code value}. */
    void landLate(String key, SequenceState value) {
        landLate(key, new SequenceStateSerde().serialize(null, value));
    }

    /** At the store's next opening, {@code key} holds {@code value} as written (an earlier format's record). */
    void landLate(String key, byte[] value) {
        pending.put(key, value);
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
        return new Store(inner.get());
    }

    @Override
    public String metricsScope() {
        return inner.metricsScope();
    }

    private final class Store extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]> implements KeyValueStore<Bytes, byte[]> {
        Store(KeyValueStore<Bytes, byte[]> wrapped) {
            super(wrapped);
        }

        @Override
        public void init(StateStoreContext context, StateStore root) {
            super.init(context, root);
            try (StringSerializer keys = new StringSerializer()) {
                pending.forEach((key, value) -> wrapped().put(Bytes.wrap(keys.serialize(null, key)), value));
            }
            pending.clear();
        }

        @Override
        public void put(Bytes key, byte[] value) {
            wrapped().put(key, value);
        }

        @Override
        public byte[] putIfAbsent(Bytes key, byte[] value) {
            return wrapped().putIfAbsent(key, value);
        }

        @Override
        public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
            wrapped().putAll(entries);
        }

        @Override
        public byte[] delete(Bytes key) {
            return wrapped().delete(key);
        }

        @Override
        public byte[] get(Bytes key) {
            return wrapped().get(key);
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
            return wrapped().range(from, to);
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
            return wrapped().reverseRange(from, to);
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> all() {
            return wrapped().all();
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> reverseAll() {
            return wrapped().reverseAll();
        }

        @Override
        public long approximateNumEntries() {
            return wrapped().approximateNumEntries();
        }
    }
}
