package io.snowstamp.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A private PostgreSQL server for one test run: the binaries of the machine's PostgreSQL (Debian's
 * {@code postgresql} package under {@code /usr/lib/postgresql/VERSION/bin}, or {@code initdb} and
 * {@code pg_ctl} on the PATH), a new cluster in a temporary directory, listening on 127.0.0.1 only,
 * on a free port, with trust authentication for the one user {@code snowstamp}. {@link #close()}
 * stops it ({@code pg_ctl stop -m fast}) and deletes the directory.
 *
 * <p>PostgreSQL refuses to run as root, and CI runs as root: there every PostgreSQL command runs as
 * the unprivileged user {@code postgres} (the package creates it; {@code nobody} where it is missing)
 * through {@code runuser -u USER --}, and the directory is handed to that user first. As any other
 * user the commands run as that user.
 *
 * <p>Without PostgreSQL, {@link #start()} skips the calling test with one line
 * ({@link Assumptions}); under CI ({@code CI} set, as {@code .ci/run} runs) it fails instead:
 * {@code .ci/run} installs the package.
 */
public final class Postgres implements AutoCloseable {
    /** The database user every test connects as (trust authentication: no password). */
    public static final String USER = "snowstamp";

    private static final String INSTALL = "PostgreSQL is not installed (initdb and pg_ctl not found): apt-get install postgresql";
    private static final AtomicInteger SCHEMAS = new AtomicInteger();

    private final Path bin;
    private final Path dir;
    private final List<String> runAs;
    private final int port;
    private final Thread onExit = new Thread(this::stopQuietly, "postgres-stop");

    private Postgres(Path bin, Path dir, List<String> runAs, int port) {
        this.bin = bin;
        this.dir = dir;
        this.runAs = runAs;
        this.port = port;
    }

    /** Initialises and starts a new server; skips the test (fails under CI) where PostgreSQL is not installed. */
    public static Postgres start() throws Exception {
        Path bin = binaries();
        if (bin == null) {
            if (System.getenv("CI") != null) {
                throw new AssertionError(INSTALL + " (.ci/run installs it)");
            }
            Assumptions.abort(INSTALL);
        }
        List<String> runAs = runAs();
        Path dir = Files.createTempDirectory("snowstamp-pg-");
        if (!runAs.isEmpty()) {
            handOver(dir, runAs.get(2));
        }
        Postgres postgres = null;
        try {
            run(runAs, dir, bin.resolve("initdb").toString(), "-D", dir.resolve("data").toString(), "-U", USER,
                    "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync");
            // a port can be taken between picking and binding it: a second pick is the retry
            for (int attempt = 1; ; attempt++) {
                postgres = new Postgres(bin, dir, runAs, FreePort.pick());
                try {
                    postgres.startServer();
                    break;
                } catch (IOException e) {
                    if (attempt == 2) {
                        throw e;
                    }
                }
            }
            Runtime.getRuntime().addShutdownHook(postgres.onExit);
            return postgres;
        } catch (Exception | AssertionError e) {
            deleteRecursively(dir);
            throw e;
        }
    }

    private void startServer() throws IOException, InterruptedException {
        // -F: no fsync (a test server; nothing survives it anyway); -k: the Unix socket in our own directory
        run(runAs, dir, bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(),
                "-l", dir.resolve("server.log").toString(), "-w", "-t", "120",
                "-o", "-h 127.0.0.1 -p " + port + " -k " + dir + " -F -c max_connections=200", "start");
    }

    /** The server's port on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** The JDBC URL of database {@code postgres} with {@code schema} first on the search path. */
    public String url(String schema) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=" + USER + "&currentSchema=" + schema;
    }

    /** A new schema of its own for one test (tests share the server, each keeps its tables apart); its name. */
    public String createSchema(String prefix) throws SQLException {
        String schema = (prefix + "_" + SCHEMAS.incrementAndGet() + "_" + Long.toString(System.nanoTime() & 0xffffff, 36))
                .toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        try (Connection db = DriverManager.getConnection(url("public")); Statement statement = db.createStatement()) {
            statement.execute("CREATE SCHEMA " + schema);
        }
        return schema;
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(onExit);
        } catch (IllegalStateException e) {
            // the JVM is exiting: the hook runs (or ran) this
        }
        stopQuietly();
    }

    private void stopQuietly() {
        try {
            if (Files.exists(dir.resolve("data").resolve("postmaster.pid"))) {
                run(runAs, dir, bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-m", "fast", "-w", "stop");
            }
            deleteRecursively(dir);
        } catch (IOException | InterruptedException | AssertionError e) {
            System.err.println("postgres in " + dir + " did not stop cleanly: " + e);
        }
    }

    /** The newest {@code /usr/lib/postgresql/N/bin} with initdb, else the directory of initdb on the PATH; null if none. */
    static Path binaries() throws IOException {
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                Path newest = versions.filter(v -> v.getFileName().toString().matches("\\d+"))
                        .filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
                        .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString()))).orElse(null);
                if (newest != null) {
                    return newest.resolve("bin");
                }
            }
        }
        String path = System.getenv("PATH");
        for (String entry : path == null ? new String[0] : path.split(java.io.File.pathSeparator)) {
            if (!entry.isEmpty() && Files.isExecutable(Path.of(entry, "initdb")) && Files.isExecutable(Path.of(entry, "pg_ctl"))) {
                return Path.of(entry);
            }
        }
        return null;
    }

    /** As root: {@code runuser -u postgres --} (or {@code nobody}); as anyone else: nothing. */
    private static List<String> runAs() throws IOException {
        if (!"root".equals(System.getProperty("user.name"))) {
            return List.of();
        }
        boolean postgresUser = Files.readAllLines(Path.of("/etc/passwd")).stream().anyMatch(line -> line.startsWith("postgres:"));
        return List.of("runuser", "-u", postgresUser ? "postgres" : "nobody", "--");
    }

    private static void handOver(Path dir, String user) throws IOException {
        UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
        PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class);
        view.setOwner(users.lookupPrincipalByName(user));
        try {
            GroupPrincipal group = users.lookupPrincipalByGroupName(user);
            view.setGroup(group);
        } catch (IOException e) {
            // nobody's group is nogroup: the owner is what counts
        }
    }

    /** Runs one command (as the server's user) in {@code dir}; fails with its output if it exits non-zero. */
    private static void run(List<String> runAs, Path dir, String... command) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(runAs);
        all.addAll(List.of(command));
        Path output = Files.createTempFile("snowstamp-pg-command-", ".log");
        try {
            Process process = new ProcessBuilder(all).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(output.toFile()).start();
            if (!process.waitFor(180, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", all) + " did not finish within 180 s");
            }
            if (process.exitValue() != 0) {
                String log = Files.exists(dir.resolve("server.log")) ? Files.readString(dir.resolve("server.log")) : "";
                throw new IOException(String.join(" ", all) + " exited " + process.exitValue() + ":\n"
                        + Files.readString(output) + log);
            }
        } finally {
            Files.deleteIfExists(output);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
