package io.snowstamp.embedded;

import io.snowstamp.SnowstampException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * The local broker of a data directory, shared between snowstamp processes: the first process to
 * need it starts an {@link EmbeddedKafka} there and publishes its address in
 * {@code <dataDir>/bootstrap.servers} while holding {@code <dataDir>/owner.lock}; any other
 * process (say {@code produce} while {@code run} is up) finds the lock held and connects to the
 * published address instead of starting a second broker on the same files.
 */
public final class LocalBroker implements AutoCloseable {
    static final String ADDRESS_FILE = "bootstrap.servers";
    static final String LOCK_FILE = "owner.lock";

    private final String bootstrapServers;
    private final EmbeddedKafka broker;      // null when another process owns the broker
    private final FileChannel lockChannel;
    private final Path dataDir;

    private LocalBroker(String bootstrapServers, EmbeddedKafka broker, FileChannel lockChannel, Path dataDir) {
        this.bootstrapServers = bootstrapServers;
        this.broker = broker;
        this.lockChannel = lockChannel;
        this.dataDir = dataDir;
    }

    /**
     * Connects to the broker another process runs on {@code dataDir}, or starts one here.
     *
     * @param port client port when this process starts the broker (0 = any free port)
     */
    public static LocalBroker obtain(Path dataDir, int port, Map<String, String> extra) {
        try {
            Files.createDirectories(dataDir);
            FileChannel channel = FileChannel.open(dataDir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;        // this JVM owns it already (tests): share it like another process would
            }
            if (lock == null) {
                channel.close();
                return new LocalBroker(readAddress(dataDir), null, null, dataDir);
            }
            Files.deleteIfExists(dataDir.resolve(ADDRESS_FILE));
            EmbeddedKafka broker;
            try {
                broker = EmbeddedKafka.start(dataDir, port, extra);
            } catch (RuntimeException e) {
                channel.close();
                throw e;
            }
            Files.writeString(dataDir.resolve(ADDRESS_FILE), broker.bootstrapServers() + "\n", StandardCharsets.US_ASCII);
            return new LocalBroker(broker.bootstrapServers(), broker, channel, dataDir);
        } catch (IOException e) {
            throw new SnowstampException("cannot use the embedded broker's data directory " + dataDir.toAbsolutePath()
                    + ": " + e.getMessage(), e);
        }
    }

    private static String readAddress(Path dataDir) throws IOException {
        Path file = dataDir.resolve(ADDRESS_FILE);
        // the owner writes the address once its broker is ready; give a starting broker time to get there
        for (int i = 0; i < 600 && !Files.exists(file); i++) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (!Files.exists(file)) {
            throw new SnowstampException("another process holds the embedded broker in " + dataDir.toAbsolutePath()
                    + " but published no address in 60 s; stop it or pass --bootstrap-servers");
        }
        return Files.readString(file, StandardCharsets.US_ASCII).trim();
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Whether this process started the broker (and stops it on close). */
    public boolean owned() {
        return broker != null;
    }

    @Override
    public void close() {
        if (broker == null) {
            return;
        }
        try {
            Files.deleteIfExists(dataDir.resolve(ADDRESS_FILE));
        } catch (IOException ignored) {
            // a stale address file is harmless: the lock, not the file, decides who owns the broker
        }
        broker.close();
        try {
            lockChannel.close();
        } catch (IOException ignored) {
            // closing the channel releases the lock; nothing else to do
        }
    }
}
