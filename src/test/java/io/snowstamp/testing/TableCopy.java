package io.snowstamp.testing;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * {@link DocumentedConsumer} at work in a background thread, copying a stamped topic into the table
 * {@code events} of one schema, the way a user runs it: optionally dying once between its database
 * commit and its offset commit ({@link CrashAfterCommit}) and started again at once with the same
 * group, as a supervisor would. What the database and the group held at that moment is kept
 * ({@link #atCrash()}), so a test can show that the restart replayed rows already inserted.
 */
public final class TableCopy implements AutoCloseable {
    /** One row of {@code events}: the ID, {@code source} and the producer's number in {@code payload} (-1 without). */
    public record Row(long id, String source, long n) {
    }

    /** One row of {@code events_refused}: the ID, {@code source}, the value as text and PostgreSQL's reason. */
    public record Refused(long id, String source, String value, String reason) {
    }

    /** The moment of the crash: the IDs in the table, and the offsets the group had committed (per partition). */
    public record AtCrash(Set<Long> ids, Map<Integer, Long> committed) {
    }

    /** The rows of {@code events} as {@link Row}s: the producer's number read from the jsonb payload. */
    public static final String EVENTS = "SELECT id, source, coalesce((payload->>'n')::bigint, -1) FROM events ORDER BY id";

    private final String bootstrapServers;
    private final String group;
    private final String url;
    private final Thread thread;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicReference<AtCrash> atCrash = new AtomicReference<>();
    private volatile boolean running = true;

    private TableCopy(String bootstrapServers, String group, String topic, String url, int crashAfterCommit) {
        this.bootstrapServers = bootstrapServers;
        this.group = group;
        this.url = url;
        this.thread = new Thread(() -> copy(topic, crashAfterCommit), "table-copy-" + group);
        thread.setDaemon(true);
    }

    /** Creates {@code events} ({@link DocumentedConsumer#TABLE}) in the database at {@code url}. */
    public static void createTable(String url) throws SQLException {
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement()) {
            statement.execute(DocumentedConsumer.TABLE);
        }
    }

    /**
     * Starts copying {@code topic} into {@code events} at {@code url} as consumer group {@code group};
     * with {@code crashAfterCommit} &gt; 0 the first run dies after that many database commits and a
     * second one takes over.
     */
    public static TableCopy start(String bootstrapServers, String group, String topic, String url, int crashAfterCommit) {
        TableCopy copy = new TableCopy(bootstrapServers, group, topic, url, crashAfterCommit);
        copy.thread.start();
        return copy;
    }

    private void copy(String topic, int crashAfterCommit) {
        try {
            if (crashAfterCommit > 0) {
                try {
                    DocumentedConsumer.copy(bootstrapServers, group, topic, CrashAfterCommit.url(url, crashAfterCommit), () -> running);
                } catch (CrashAfterCommit.Crash crash) {
                    atCrash.set(new AtCrash(rows().stream().map(Row::id).collect(Collectors.toSet()), TestBroker.committedOffsets(bootstrapServers, group, topic)));
                }
            }
            DocumentedConsumer.copy(bootstrapServers, group, topic, url, () -> running);
        } catch (Throwable e) {
            failure.set(e);
        }
    }

    /** What the table and the group held when the consumer crashed; null if it has not crashed (yet). */
    public AtCrash atCrash() {
        return atCrash.get();
    }

    /** The rows of {@code events}, ordered by ID. */
    public List<Row> rows() throws SQLException {
        return rows(url, EVENTS);
    }

    /** The rows of {@code events_refused}, ordered by ID. */
    public List<Refused> refused() throws SQLException {
        List<Refused> rows = new ArrayList<>();
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement();
             ResultSet result = statement.executeQuery("SELECT id, source, value, reason FROM events_refused ORDER BY id")) {
            while (result.next()) {
                rows.add(new Refused(result.getLong(1), result.getString(2), new String(result.getBytes(3), StandardCharsets.UTF_8), result.getString(4)));
            }
        }
        return rows;
    }

    /** {@code SELECT id, source, n ...}: the rows it returns. */
    public static List<Row> rows(String url, String select) throws SQLException {
        List<Row> rows = new ArrayList<>();
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement();
             ResultSet result = statement.executeQuery(select)) {
            while (result.next()) {
                rows.add(new Row(result.getLong(1), result.getString(2), result.getLong(3)));
            }
        }
        return rows;
    }

    /** The number of rows of {@code events}. */
    public long count() throws SQLException {
        return count(url, "events");
    }

    /** The number of rows of {@code table}. */
    public static long count(String url, String table) throws SQLException {
        try (Connection db = DriverManager.getConnection(url); Statement statement = db.createStatement();
             ResultSet result = statement.executeQuery("SELECT count(*) FROM " + table)) {
            result.next();
            return result.getLong(1);
        }
    }

    /** Waits until the table holds {@code rows} rows and the consumer has crashed if it was to; fails on a consumer error. */
    public void await(long rows, boolean crashed, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        long count = count();
        while (count != rows || crashed && atCrash() == null) {
            assertAlive();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("events holds " + count + " rows, not " + rows + ", after " + timeout.toSeconds()
                        + " s (crashed: " + (atCrash() != null) + ")");
            }
            Thread.sleep(200);
            count = count();
        }
    }

    private void assertAlive() {
        Throwable error = failure.get();
        if (error != null) {
            throw new AssertionError("the documented consumer failed: " + error, error);
        }
    }

    /** Stops the consumer (it ends its poll and closes) and fails if it had failed. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        assertAlive();
    }
}
