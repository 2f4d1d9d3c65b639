package io.snowstamp.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A snowstamp process started from the shaded jar ({@code target/snowstamp.jar}, built in the
 * package phase before failsafe runs), with stdout and stderr captured to files for diagnosis.
 *
 * <p>A command prefix such as {@code faketime} may fork the JVM instead of exec'ing it, and does
 * not pass signals on; {@link #terminate}, {@link #kill} and {@link #close} therefore signal the
 * process's descendants (the JVM) first, then the process itself.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final Path out;
    private final Path err;

    /**
     * Every child not killed yet: SIGKILLed when this test JVM exits (a fork that timed out, a test that failed before
     * its close), so that none outlives the run — a frozen one (SIGSTOP) would stay stopped for good, holding its ports
     * and memory.
     */
    private static final java.util.Set<ChildJvm> LIVE = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(child -> {
            child.process.descendants().forEach(ProcessHandle::destroyForcibly);
            child.process.destroyForcibly();
        }), "child-jvm-reaper"));
    }

    private ChildJvm(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
        LIVE.add(this);
    }

    public static Path jar() {
        Path jar = Path.of(System.getProperty("snowstamp.jar", "target/snowstamp.jar"));
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " does not exist: run the tests with 'mvn verify' (it packages first)");
        }
        return jar;
    }

    /**
     * The jar, readable by any user: a copy in a world-readable temporary directory, made once per test
     * JVM. A child started under a uid of its own (the cluster tests' stampers, for iptables' owner match)
     * cannot read {@code target/} when the checkout lies in a private directory (root's home, {@code mktemp -d}).
     */
    public static synchronized Path jarForAnyUser() throws IOException {
        if (sharedJar == null) {
            Path dir = Files.createTempDirectory("snowstamp-jar");
            Path copy = dir.resolve("snowstamp.jar");
            Files.copy(jar(), copy);
            for (Path path : List.of(dir, copy)) {
                path.toFile().setReadable(true, false);
                path.toFile().setExecutable(true, false);
            }
            copy.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            sharedJar = copy;
        }
        return sharedJar;
    }

    private static Path sharedJar;

    /** Starts {@code java [jvmArgs] -jar snowstamp.jar args...}; {@code prefix} (e.g. faketime) goes before java. */
    public static ChildJvm start(Path logDir, String name, List<String> prefix, List<String> jvmArgs, String... args) throws IOException {
        return start(logDir, name, prefix, Map.of(), jvmArgs, args);
    }

    /**
     * Like {@link #start(Path, String, List, List, String...)} with extra environment variables
     * ({@code SNOWSTAMP_*} variables of this JVM are never inherited; those in {@code env} are set).
     * Output is appended to {@code <logDir>/<name>.out} and {@code .err}: give each start its own name.
     */
    public static ChildJvm start(Path logDir, String name, List<String> prefix, Map<String, String> env,
                                 List<String> jvmArgs, String... args) throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        // setpriv runs the child as another user, who cannot read a checkout in a private directory: it gets a
        // world-readable copy of the jar, and no class archive (made for the jar in target/, next to it)
        boolean otherUser = prefix.contains("setpriv");
        if (!otherUser && jvmArgs.stream().noneMatch(arg -> arg.startsWith("-XX:ArchiveClassesAtExit"))) {
            command.addAll(ClassArchive.options());
        }
        command.addAll(jvmArgs);
        command.add("-jar");
        command.add((otherUser ? jarForAnyUser() : jar()).toAbsolutePath().toString());
        command.addAll(List.of(args));
        Files.createDirectories(logDir);
        Path out = logDir.resolve(name + ".out");
        Path err = logDir.resolve(name + ".err");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile()));
        builder.environment().keySet().removeIf(key -> key.startsWith("SNOWSTAMP_"));
        // nothing turned off behind the test's back: a child runs on the shipped defaults (the worker registry on);
        // Stamper gives every application an ID space of its own, a test that needs the registry off says so and why
        builder.environment().putAll(env);
        return new ChildJvm(builder.start(), out, err);
    }

    /**
     * Starts an arbitrary command (e.g. the image's {@code java ... -cp ... Main run}) in {@code workDir},
     * with {@code environment} added to a copy of this JVM's environment without its {@code SNOWSTAMP_*} variables.
     */
    public static ChildJvm startCommand(Path logDir, String name, Path workDir, java.util.Map<String, String> environment,
                                        List<String> command) throws IOException {
        Files.createDirectories(logDir);
        Files.createDirectories(workDir);
        Path out = logDir.resolve(name + ".out");
        Path err = logDir.resolve(name + ".err");
        ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile()));
        builder.environment().keySet().removeIf(key -> key.startsWith("SNOWSTAMP_"));
        builder.environment().putAll(environment);
        return new ChildJvm(builder.start(), out, err);
    }

    /** The {@code java} executable of this JVM. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    public static ChildJvm start(Path logDir, String name, String... args) throws IOException {
        return start(logDir, name, List.of(), List.of(), args);
    }

    /** Waits until stdout contains {@code text}; fails with both logs if the process dies or time runs out. */
    public void awaitOutput(String text, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (Files.exists(out) && Files.readString(out).contains(text)) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError("process exited " + process.exitValue() + " before printing '" + text + "'\n" + logs());
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no '" + text + "' within " + timeoutSeconds + " s\n" + logs());
    }

    /** Waits until stderr (the log) contains {@code text}; fails with both logs if the process dies or time runs out. */
    public void awaitLog(String text, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (stderr().contains(text)) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError("process exited " + process.exitValue() + " before logging '" + text + "'\n" + logs());
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no '" + text + "' logged within " + timeoutSeconds + " s\n" + logs());
    }

    /** The admin endpoint the child printed ({@code admin: http://127.0.0.1:PORT}), waited for up to 60 s. */
    public String adminUrl() throws IOException, InterruptedException {
        java.util.regex.Pattern printed = java.util.regex.Pattern.compile("admin: (http://127\\.0\\.0\\.1:\\d+)");
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() - until < 0) {
            java.util.regex.Matcher admin = printed.matcher(stdout());
            if (admin.find()) {
                return admin.group(1);
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no admin endpoint printed within 60 s\n" + logs());
    }

    public String logs() throws IOException {
        return "--- stdout ---\n" + (Files.exists(out) ? Files.readString(out) : "") + "--- stderr ---\n"
                + (Files.exists(err) ? Files.readString(err) : "");
    }

    public String stdout() throws IOException {
        return Files.exists(out) ? Files.readString(out) : "";
    }

    public String stderr() throws IOException {
        return Files.exists(err) ? Files.readString(err) : "";
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM (to the JVM, also behind a forking prefix), then waits for the exit code. */
    public int terminate(long timeoutSeconds) throws InterruptedException {
        List<ProcessHandle> descendants = process.descendants().toList();
        descendants.forEach(ProcessHandle::destroy);
        if (descendants.isEmpty()) {
            process.destroy();
        }
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            killTree();
            throw new AssertionError("process did not stop within " + timeoutSeconds + " s of SIGTERM");
        }
        return process.exitValue();
    }

    /** True while the process is stopped (SIGSTOP): state {@code T} in {@code /proc/PID/stat} (Linux). */
    public boolean isFrozen() throws IOException {
        Path stat = Path.of("/proc", String.valueOf(process.pid()), "stat");
        if (!Files.exists(stat)) {
            return false;
        }
        String line = Files.readString(stat);
        // "pid (comm) S ...": the state follows the command name's closing parenthesis
        return line.substring(line.lastIndexOf(')') + 2).startsWith("T");
    }

    /** Waits until the process is stopped (it may stop itself); fails with its logs on timeout or exit. */
    public void awaitFrozen(long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (!isFrozen()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("process not stopped within " + timeoutSeconds + " s\n" + logs());
            }
            Thread.sleep(50);
        }
    }

    /** SIGCONT: a stopped process runs on from where it stopped. */
    public void thaw() throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", "-CONT", String.valueOf(process.pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new AssertionError("kill -CONT " + process.pid() + " exited " + exit);
        }
    }

    /** SIGKILL: no shutdown hook, no commit, no goodbye (the JVM first, then a forking prefix). */
    public void kill() throws InterruptedException {
        killTree();
    }

    private void killTree() throws InterruptedException {
        for (ProcessHandle child : process.descendants().toList()) {
            child.destroyForcibly();
            try {
                child.onExit().get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new AssertionError("process " + child.pid() + " did not die within 60 s of SIGKILL", e);
            }
        }
        process.destroyForcibly();
        process.waitFor();
        LIVE.remove(this);
    }

    public int waitFor(long timeoutSeconds) throws InterruptedException {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            killTree();
            throw new AssertionError("process did not exit within " + timeoutSeconds + " s");
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            killTree();
        }
    }
}
