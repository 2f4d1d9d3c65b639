package io.snowstamp.runtime;

import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBufferManager;

import java.util.Map;

/**
 * The RocksDB options of the stamper's one RocksDB store, the records a task sets aside while its next ID waits
 * ({@code pending-records}, one per partition). Kafka Streams' defaults size every store as if it were large: a 50 MB
 * block cache of its own and up to three 16 MB memtables per store, unbounded across the up to 1,024 stores of an
 * instance, and on disk a 4 MB preallocated MANIFEST and a write-ahead log preallocated at the memtable's size, ~4 MB of
 * state directory per partition (4 GB at 1,024) for a store that is empty but during a takeover or a lead pause.
 *
 * <p>So every store of the instance shares ONE {@value #CACHE_BYTES}-byte LRU block cache and ONE write buffer manager
 * of {@value #WRITE_BUFFER_BYTES} bytes charged to that cache (Kafka Streams' bounded-memory recipe): the instance's
 * RocksDB memory is bounded by the cache, whatever the number of partitions. Small because the store is read only when
 * a task drains what it set aside, in key order, right after writing it: the blocks read are in the memtable or were
 * just flushed, and a long pause spills to disk (where it belongs) rather than holding memory. Memtables are
 * {@value #MEMTABLE_BYTES} bytes, which also bounds the write-ahead log's preallocation; the MANIFEST preallocates
 * {@value #MANIFEST_PREALLOCATION_BYTES} bytes; the info log (Kafka Streams logs errors only) keeps one old file.
 *
 * <p>Named by {@code rocksdb.config.setter} unless {@code kafka.rocksdb.config.setter} is given
 * ({@link KafkaSettings#streams}). Kafka Streams creates one instance per store, hence the shared objects are static:
 * native, they live as long as the JVM and are never closed per store ({@link #close}).
 */
public final class SmallRocksDb implements RocksDBConfigSetter {
    /** The block cache of all stores of the instance, memtables included (they are charged to it). */
    static final long CACHE_BYTES = 16L * 1024 * 1024;
    /** The memtables of all stores together; past it, the largest is flushed. */
    static final long WRITE_BUFFER_BYTES = 8L * 1024 * 1024;
    /** One memtable of one store. */
    static final long MEMTABLE_BYTES = 1024L * 1024;
    /** Memtables per store before writes stall: one filling, one flushing. */
    static final int MEMTABLES = 2;
    /** RocksDB preallocates 4 MB per store for a MANIFEST that stays a few KB. */
    static final long MANIFEST_PREALLOCATION_BYTES = 64L * 1024;
    /** The info log rolls over at this size; RocksDB keeps {@link #LOG_FILES} files. */
    static final long LOG_FILE_BYTES = 256L * 1024;
    static final int LOG_FILES = 2;

    /** Created when the first store opens (the class is named in the config long before). */
    static final class Shared {
        static {
            RocksDB.loadLibrary();
        }

        // no strict limit: a full cache evicts, a strict one would fail reads and writes
        static final Cache CACHE = new LRUCache(CACHE_BYTES, -1, false, 0.1);
        static final WriteBufferManager WRITE_BUFFERS = new WriteBufferManager(WRITE_BUFFER_BYTES, CACHE);
    }

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
        // the instance Kafka Streams created: it tells Kafka Streams' metrics which cache the store uses
        BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
        table.setBlockCache(Shared.CACHE);
        // index and filter blocks in the shared cache too, so that they are bounded by it (pinned at high priority)
        table.setCacheIndexAndFilterBlocks(true);
        table.setCacheIndexAndFilterBlocksWithHighPriority(true);
        table.setPinTopLevelIndexAndFilter(true);
        options.setTableFormatConfig(table);
        options.setWriteBufferManager(Shared.WRITE_BUFFERS);
        options.setWriteBufferSize(MEMTABLE_BYTES);
        options.setMaxWriteBufferNumber(MEMTABLES);
        options.setManifestPreallocationSize(MANIFEST_PREALLOCATION_BYTES);
        options.setInfoLogLevel(InfoLogLevel.ERROR_LEVEL);
        options.setMaxLogFileSize(LOG_FILE_BYTES);
        options.setKeepLogFileNum(LOG_FILES);
    }

    /** Nothing per store: the cache and write buffer manager are shared by every store and outlive each. */
    @Override
    public void close(String storeName, Options options) {
    }
}
