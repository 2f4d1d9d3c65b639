package io.snowstamp.testing.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A Linux network namespace of the test's own ({@code ip netns add snowstamp-<random>}) with only
 * its loopback interface up, and the {@code iptables} rules that make network faults inside it.
 *
 * <p>Everything a fault test runs in it (the Kafka nodes, the stampers) talks over the namespace's
 * own {@code 127.0.0.1}: no rule of it can touch any other traffic of the machine, and nothing in it
 * can reach any other address (there is no other interface). Rules select the packets of one
 * process by its uid ({@code -m owner --uid-owner}: each stamper and each Kafka node runs under a uid of its own,
 * see {@link #execAs}) and one broker by its port. Deleting the namespace deletes its rules; processes
 * still inside keep it alive, so the owner stops them first.
 *
 * <p>Needs root, {@code ip} (iproute2), {@code iptables} and {@code setpriv} (util-linux):
 * {@link #unavailable()} says which is missing.
 */
public final class Netns implements AutoCloseable {
    private static final String PREFIX = "snowstamp-";
    private static volatile Optional<String> probed;

    private final String name;
    private final Thread cleanup;

    private Netns(String name) {
        this.name = name;
        // a JVM that ends without closing this (a killed test run) still removes the namespace
        this.cleanup = new Thread(this::delete, "netns-cleanup-" + name);
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /**
     * Why network namespaces cannot be used here (one line), or empty when they can: checked once
     * per JVM by creating and deleting a namespace with one iptables rule in it.
     */
    public static synchronized Optional<String> unavailable() {
        if (probed == null) {
            probed = probe();
        }
        return probed;
    }

    private static Optional<String> probe() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return Optional.of("network namespaces need Linux");
        }
        for (String tool : List.of("ip", "iptables", "setpriv")) {
            if (onPath(tool).isEmpty()) {
                return Optional.of("'" + tool + "' is not installed (the network-fault tests need root, ip, iptables and setpriv;"
                        + " .ci/run installs iptables)");
            }
        }
        try {
            if (!run(List.of("id", "-u")).trim().equals("0")) {
                return Optional.of("not root: network namespaces and iptables need root");
            }
            try (Netns probe = create()) {
                probe.iptables("-A", "OUTPUT", "-p", "tcp", "--dport", "9", "-j", "DROP");
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.of("cannot create a network namespace with an iptables rule: " + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    private static Optional<Path> onPath(String tool) {
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(List.of((path == null ? "" : path).split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"));
        return dirs.stream().filter(dir -> !dir.isEmpty()).map(dir -> Path.of(dir, tool)).filter(Files::isExecutable).findFirst();
    }

    /** Creates a namespace with a random name and its loopback up. */
    public static Netns create() throws IOException, InterruptedException {
        String name = PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
        run(List.of("ip", "netns", "add", name));
        Netns netns = new Netns(name);
        try {
            run(List.of("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"));
        } catch (IOException | RuntimeException e) {
            netns.close();
            throw e;
        }
        return netns;
    }

    public String name() {
        return name;
    }

    /** The command prefix that runs a program inside the namespace, as root. */
    public List<String> exec() {
        return List.of("ip", "netns", "exec", name);
    }

    /**
     * The command prefix that runs a program inside the namespace under {@code uid} (also its gid, no
     * supplementary groups). The program can read what everyone can read and write only what
     * {@code uid} owns: give it its own directories ({@link #chown}).
     */
    public List<String> execAs(int uid) {
        List<String> prefix = new ArrayList<>(exec());
        prefix.addAll(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups"));
        return prefix;
    }

    /** Creates {@code dir} (and its parents) and gives it to {@code uid}. */
    public static Path chown(Path dir, int uid) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        run(List.of("chown", "-R", uid + ":" + uid, dir.toString()));
        return dir;
    }

    /** One or more iptables rules in the namespace; {@link #close} deletes them. */
    public final class Rule implements AutoCloseable {
        private final List<List<String>> specs;
        private boolean removed;

        private Rule(List<List<String>> specs) {
            this.specs = specs;
        }

        /** The rules as {@code iptables -S} would show them (for the test's timeline). */
        @Override
        public String toString() {
            return String.join("; ", specs.stream().map(spec -> String.join(" ", spec)).toList());
        }

        /** Deletes the rules (once; later calls do nothing). */
        @Override
        public void close() throws IOException, InterruptedException {
            if (removed) {
                return;
            }
            removed = true;
            IOException failure = null;
            List<List<String>> newestFirst = new ArrayList<>(specs);
            java.util.Collections.reverse(newestFirst);
            for (List<String> spec : newestFirst) {
                List<String> delete = new ArrayList<>(spec);
                delete.set(delete.indexOf("-A"), "-D");
                try {
                    iptables(delete.toArray(String[]::new));
                } catch (IOException e) {
                    failure = e;
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** Appends one rule ({@code iptables -A CHAIN ...} or {@code -t TABLE -A CHAIN ...}) and returns it. */
    public Rule rule(String... spec) throws IOException, InterruptedException {
        return rules(List.of(List.of(spec)));
    }

    private Rule rules(List<List<String>> specs) throws IOException, InterruptedException {
        List<List<String>> added = new ArrayList<>();
        try {
            for (List<String> spec : specs) {
                iptables(spec.toArray(String[]::new));
                added.add(spec);
            }
        } catch (IOException | RuntimeException e) {
            new Rule(added).close();
            throw e;
        }
        return new Rule(List.copyOf(specs));
    }

    /**
     * Drops the packets that processes of {@code uid} send to TCP port {@code port}: the process can
     * no longer reach that broker; the broker's own packets still arrive, but nothing they answer
     * gets through. Every other process and port is untouched.
     */
    public Rule dropOwnPackets(int uid, int port) throws IOException, InterruptedException {
        return rule(ownPackets(uid, port, "DROP").toArray(String[]::new));
    }

    /**
     * {@link #dropOwnPackets(int, int)} for every uid and each of its ports at once, as one rule set: the processes of
     * each uid of {@code portsByUid} can no longer reach those ports. With two sides naming each other's ports, no
     * request gets from either side to the other (the answers on connections made before have nothing to answer).
     */
    public Rule dropOwnPackets(Map<Integer, List<Integer>> portsByUid) throws IOException, InterruptedException {
        List<List<String>> specs = new ArrayList<>();
        portsByUid.forEach((uid, ports) -> ports.forEach(port -> specs.add(ownPackets(uid, port, "DROP"))));
        return rules(specs);
    }

    /**
     * Refuses the packets that processes of {@code uid} send to each TCP port of {@code ports} with a TCP reset
     * ({@code -j REJECT --reject-with tcp-reset}): unlike {@link #dropOwnPackets(int, int)}, the process learns at once
     * that the broker is unreachable (its connection is reset, a new one refused), so its clients give up on that broker
     * without waiting out a request or connection timeout and ask the others for fresh metadata.
     */
    public Rule rejectOwnPackets(int uid, List<Integer> ports) throws IOException, InterruptedException {
        List<List<String>> specs = new ArrayList<>();
        for (int port : ports) {
            specs.add(ownPackets(uid, port, "REJECT", "--reject-with", "tcp-reset"));
        }
        return rules(specs);
    }

    /** The rule that sends the packets of {@code uid} to {@code port} to {@code target} (with its options). */
    private static List<String> ownPackets(int uid, int port, String... target) {
        List<String> spec = new ArrayList<>(List.of("-A", "OUTPUT", "-p", "tcp", "-m", "owner", "--uid-owner", String.valueOf(uid),
                "--dport", String.valueOf(port), "-j"));
        spec.addAll(List.of(target));
        return List.copyOf(spec);
    }

    /**
     * Cuts the link between processes of {@code uid} and every port of {@code ports}, both directions:
     * their own packets to the port are dropped, and so is everything the port sends on their
     * connections (marked with {@code CONNMARK} {@code uid} when they send; the mark is per
     * connection, so it matches the answers too).
     */
    public Rule cut(int uid, List<Integer> ports) throws IOException, InterruptedException {
        List<List<String>> specs = new ArrayList<>();
        specs.add(List.of("-t", "mangle", "-A", "OUTPUT", "-m", "owner", "--uid-owner", String.valueOf(uid),
                "-j", "CONNMARK", "--set-mark", String.valueOf(uid)));
        for (int port : ports) {
            specs.add(ownPackets(uid, port, "DROP"));
            specs.add(List.of("-A", "INPUT", "-p", "tcp", "--sport", String.valueOf(port), "-m", "connmark",
                    "--mark", String.valueOf(uid), "-j", "DROP"));
        }
        return rules(specs);
    }

    /** Drops each packet in the namespace with probability {@code probability}, whoever sends it. */
    public Rule randomLoss(double probability) throws IOException, InterruptedException {
        return rule("-A", "OUTPUT", "-m", "statistic", "--mode", "random", "--probability", String.valueOf(probability), "-j", "DROP");
    }

    /** Runs {@code iptables -w ARGS} in the namespace. */
    public void iptables(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(exec());
        command.addAll(List.of("iptables", "-w"));
        command.addAll(List.of(args));
        run(command);
    }

    /** Runs a command, returns its stdout; fails with both streams unless it exits 0 within 60 s. */
    static String run(List<String> command) throws IOException, InterruptedException {
        Path out = Files.createTempFile("snowstamp-cmd", ".out");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + ": no exit within 60 s");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " exited " + process.exitValue() + ": " + text.strip());
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private void delete() {
        try {
            run(List.of("ip", "netns", "delete", name));
        } catch (IOException | InterruptedException e) {
            // already gone
        }
    }

    /** Deletes the namespace (and so its rules). Stop the processes inside first: they keep it alive otherwise. */
    @Override
    public void close() {
        delete();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
    }
}
