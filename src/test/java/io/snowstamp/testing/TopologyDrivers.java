package io.snowstamp.testing;

import io.snowstamp.config.Keys;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The {@link TopologyTestDriver}s of one topology test (the stamper's and sequence mode's): a state
 * directory of their own, a wall clock the test moves, configs that point at both, and restarts that
 * keep a task's local state, as a stamper restarting on its disk has it. One per test instance:
 * <pre>
 * &#64;AutoClose
 * private final TopologyDrivers drivers = new TopologyDrivers();
 * </pre>
 * {@link #close} closes every driver still open and deletes the state directory.
 *
 * <p>The driver runs a single task, {@code 0_0}; its directory is the one whose state survives.
 */
public final class TopologyDrivers implements AutoCloseable {
    /** The instance id of every config: the state of a task lives in {@code <state dir>/<instance>/<application>/0_0}. */
    public static final String INSTANCE = "test-instance";
    /** Where the clock starts. */
    public static final long T0 = Instant.parse("2026-03-01T12:00:00Z").toEpochMilli();

    private final Path stateDir;
    private final AtomicLong clock = new AtomicLong(T0);
    private final List<TopologyTestDriver> open = new ArrayList<>();

    public TopologyDrivers() {
        try {
            stateDir = Files.createTempDirectory("snowstamp-topology");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The wall clock the topologies get (epoch millis); starts at {@link #T0}. */
    public AtomicLong clock() {
        return clock;
    }

    public Path stateDir() {
        return stateDir;
    }

    /**
     * A config base for these drivers: instance {@link #INSTANCE}, the state directory, a bootstrap
     * address the driver never dials, then {@code pairs} (key, value, ...).
     */
    public TestConfig base(String... pairs) {
        String[] fixed = {Keys.INSTANCE_ID, INSTANCE, Keys.STATE_DIR, stateDir.toString(), Keys.BOOTSTRAP_SERVERS, "dummy:9092"};
        return TestConfig.base(Stream.concat(Arrays.stream(fixed), Arrays.stream(pairs)).toArray(String[]::new));
    }

    /**
     * Starts a driver for {@code topology} with {@code streamsSettings} (those of the config: its
     * application id names the task directory), whose task state outlives {@link #stop}.
     */
    public TopologyTestDriver start(Topology topology, Properties streamsSettings) {
        keepTaskStateOnClose(streamsSettings.getProperty(StreamsConfig.APPLICATION_ID_CONFIG));
        TopologyTestDriver driver = new TopologyTestDriver(topology, streamsSettings);
        open.add(driver);
        return driver;
    }

    /** Closes {@code driver}, as a clean stop does; the next {@link #start} of the application finds its task state. */
    public void stop(TopologyTestDriver driver) {
        driver.close();
        open.remove(driver);
    }

    /** Deletes the kept task state of {@code applicationId} (a lost disk); call after {@link #stop}. */
    public void wipe(String applicationId) {
        Path kept = kept(applicationId);
        try (Stream<Path> files = Files.walk(kept)) {
            files.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(kept)).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code TopologyTestDriver.close()} deletes the task directories after closing the stores
     * cleanly, which would turn a restart into a first start. It deletes them with a file walk that
     * does not follow symbolic links, so making the task directory {@code 0_0} a link to a
     * directory elsewhere keeps the closed store (RocksDB files and checkpoint) for the next driver.
     */
    private void keepTaskStateOnClose(String applicationId) {
        try {
            Path appDir = stateDir.resolve(INSTANCE).resolve(applicationId);
            Path kept = kept(applicationId);
            Files.createDirectories(appDir);
            Files.createDirectories(kept);
            Path task = appDir.resolve("0_0");
            if (!Files.isSymbolicLink(task)) {
                Files.createSymbolicLink(task, kept);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path kept(String applicationId) {
        return stateDir.resolve("kept-" + applicationId + "-0_0");
    }

    /** UTF-8 bytes of {@code text}; null stays null (a record without key or value). */
    public static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    /** The last header {@code name} of {@code record} as text, or null. */
    public static String header(TestRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        open.forEach(TopologyTestDriver::close);
        open.clear();
        try (Stream<Path> files = Files.walk(stateDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
