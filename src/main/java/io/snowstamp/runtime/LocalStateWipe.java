package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Kafka Streams 4.3.1 opens the local stores at start and treats a RocksDB directory left
 * half-written by a SIGKILL as fatal on every later start. Local state is only a cache here (the
 * changelog restores it, the tail guard covers the rest), so the runner wipes it once and starts again.
 *
 * <p>Only the pause buffer of {@code id.on-excess-lead=pause} is still a RocksDB store; the worker
 * and sequence state are in-memory stores, for which Kafka Streams creates no local files at all
 * (without a persistent store it does not even create the state directory), so with the default
 * settings there is nothing a SIGKILL could leave half-written.
 */
final class LocalStateWipe {
    private LocalStateWipe() {
    }

    /** Whether {@code error} comes from a RocksDB store that cannot be opened. */
    static boolean unreadableStore(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.rocksdb.RocksDBException) {
                return true;
            }
        }
        return false;
    }

    /** Deletes {@code dir} and everything under it (nothing when it does not exist). */
    static void wipe(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new SnowstampException("cannot wipe the unreadable local state in " + dir + ": " + e.getMessage(), e);
        }
    }
}
