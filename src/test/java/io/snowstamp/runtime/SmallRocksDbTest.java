package io.snowstamp.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.streams.state.internals.BlockBasedTableConfigWithAccessibleCache;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.junit.jupiter.api.Test;

class SmallRocksDbTest {

    private static Options configured(String store) {
        RocksDB.loadLibrary();
        Options options = new Options();
        // Kafka Streams hands the setter options that already carry a block-based table config
        options.setTableFormatConfig(new BlockBasedTableConfigWithAccessibleCache());
        new SmallRocksDb().setConfig(store, options, Map.of());
        return options;
    }

    @Test
    void shouldShrinkTheFilesAndMemtablesOfEveryStore() {
        try (Options options = configured("pending-records")) {
            assertThat(options.manifestPreallocationSize()).isEqualTo(64L * 1024);
            assertThat(options.writeBufferSize()).isEqualTo(1024L * 1024);
            assertThat(options.maxWriteBufferNumber()).isEqualTo(2);
            assertThat(options.maxLogFileSize()).isEqualTo(256L * 1024);
            assertThat(options.keepLogFileNum()).isEqualTo(2);
            assertThat(options.infoLogLevel()).isEqualTo(InfoLogLevel.ERROR_LEVEL);
            BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
            assertThat(table.cacheIndexAndFilterBlocks()).isTrue();
        }
    }

    @Test
    void shouldShareOneCacheAndOneWriteBufferManagerAcrossStoresAndCloseNeitherWithAStore() {
        Options first = configured("a");
        Options second = configured("b");
        assertThat(first.writeBufferManager()).isNotNull().isSameAs(second.writeBufferManager());
        assertThat(((BlockBasedTableConfigWithAccessibleCache) first.tableFormatConfig()).blockCache())
                .isNotNull().isSameAs(((BlockBasedTableConfigWithAccessibleCache) second.tableFormatConfig()).blockCache());
        new SmallRocksDb().close("a", first);
        first.close();
        // still usable by the other stores: a store closed first must not free what the others use
        assertThat(SmallRocksDb.Shared.WRITE_BUFFERS.isOwningHandle()).isTrue();
        assertThat(SmallRocksDb.Shared.CACHE.isOwningHandle()).isTrue();
        second.close();
    }
}
