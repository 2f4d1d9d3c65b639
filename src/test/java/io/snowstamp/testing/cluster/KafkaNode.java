package io.snowstamp.testing.cluster;

import io.snowstamp.testing.ChildJvm;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * One node of a {@link KafkaCluster}: a real Kafka 4.3.1 process ({@code kafka.Kafka}, broker and
 * controller) in a child JVM inside the cluster's network namespace, on its own two loopback ports
 * and data directory, under a uid of its own ({@link #uid}: {@code 23200 + id}, which owns its directory), so that
 * iptables rules can single its packets out ({@link KafkaCluster#cutFromControllers}). It can be SIGKILLed and started again on the same
 * data, or frozen (SIGSTOP) and resumed (SIGCONT). Each start logs to new files {@code node-<id>-<n>.out/.err} (opened
 * by this JVM, so owned by it).
 */
public final class KafkaNode {
    /** The uid of node 1; node {@code id} runs as {@code FIRST_UID - 1 + id}. Apart from the stampers' (231xx). */
    private static final int FIRST_UID = 23201;
    /** The line Kafka logs once the node serves clients. */
    private static final String STARTED = "Kafka Server started";

    private final int id;
    private final int port;
    private final int controllerPort;
    private final Path dir;
    private final Path logDir;
    private final Netns netns;
    private ChildJvm process;
    private int starts;
    private volatile boolean frozen;

    KafkaNode(int id, int port, int controllerPort, Path dir, Path logDir, Netns netns) {
        this.id = id;
        this.port = port;
        this.controllerPort = controllerPort;
        this.dir = dir;
        this.logDir = logDir;
        this.netns = netns;
    }

    public int id() {
        return id;
    }

    /** The client port (PLAINTEXT) on 127.0.0.1. */
    public int port() {
        return port;
    }

    public int controllerPort() {
        return controllerPort;
    }

    /** The uid the node's process runs under (iptables' {@code --uid-owner} names its packets). */
    public int uid() {
        return FIRST_UID - 1 + id;
    }

    Path config() {
        return dir.resolve("node.properties");
    }

    /** Writes {@code node.properties}: {@code common} plus this node's id, listeners and data directory. */
    void writeConfig(Properties common) throws IOException {
        Properties p = new Properties();
        p.putAll(common);
        p.setProperty("node.id", String.valueOf(id));
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("log.dirs", dir.resolve("data").toString());
        Files.createDirectories(dir);
        try (OutputStream out = Files.newOutputStream(config())) {
            p.store(out, "node " + id + " of a snowstamp test cluster");
        }
    }

    /**
     * {@code kafka.tools.StorageTool format -t CLUSTER_ID -c node.properties} (static quorum: no --standalone), as root,
     * then the node's directory is given to its {@link #uid}.
     */
    void format(String clusterId) throws Exception {
        ChildJvm format = ChildJvm.startCommand(logDir, "format-" + id, dir, Map.of(), List.of(ChildJvm.java(), "-Xmx256m",
                "-cp", ChildJvm.jar().toAbsolutePath().toString(), "kafka.tools.StorageTool", "format", "-t", clusterId,
                "-c", config().toString()));
        int exit = format.waitFor(120);
        if (exit != 0) {
            throw new IllegalStateException("formatting node " + id + " exited " + exit + "\n" + format.logs());
        }
        Netns.chown(dir, uid());
    }

    /** Starts the node's process and returns at once ({@link #awaitStarted} waits for it). */
    public synchronized void launch() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("node " + id + " is running");
        }
        List<String> command = new ArrayList<>(netns.execAs(uid()));
        // under its own uid it may not read target/ (a checkout in a private directory): the world-readable copy
        command.addAll(List.of(ChildJvm.java(), "-Xmx512m", "-XX:-UsePerfData",
                "-cp", ChildJvm.jarForAnyUser().toAbsolutePath().toString(), "kafka.Kafka", config().toString()));
        // the shaded jar's logback configuration: Kafka's own INFO lines, for diagnosis (elections, fencing, ISR changes)
        process = ChildJvm.startCommand(logDir, "node-" + id + "-" + (++starts), dir, Map.of("SNOWSTAMP_LOG_KAFKA_LEVEL", "INFO"), command);
        frozen = false;
    }

    /** Waits until the node logs that it serves clients; fails with its log if it dies first. */
    public void awaitStarted(long timeoutSeconds) throws Exception {
        process.awaitLog(STARTED, timeoutSeconds);
    }

    /** Starts the node again on its data (after {@link #kill}) and waits until it serves clients. */
    public void restart() throws Exception {
        launch();
        awaitStarted(180);
    }

    /** SIGKILL: no controlled shutdown; the process is gone when this returns. */
    public synchronized void kill() throws InterruptedException {
        if (frozen) {
            thaw();
        }
        process.kill();
    }

    /** SIGSTOP: the process keeps its sockets open and answers nothing until {@link #thaw}. */
    public synchronized void freeze() throws IOException, InterruptedException {
        signal("-STOP");
        frozen = true;
    }

    /** SIGCONT. */
    public synchronized void thaw() {
        try {
            signal("-CONT");
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("cannot resume node " + id, e);
        }
        frozen = false;
    }

    private void signal(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, String.valueOf(process.pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited " + exit);
        }
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    public boolean isFrozen() {
        return frozen;
    }

    public long pid() {
        return process.pid();
    }

    /** The current process's log (stderr: Kafka logs there through the jar's logback configuration). */
    public String log() throws IOException {
        return process == null ? "" : process.stderr();
    }

    /** Stops the process for good (resumed first if frozen). */
    synchronized void stop() throws InterruptedException {
        if (process != null) {
            if (frozen) {
                thaw();
            }
            process.close();
        }
    }

    @Override
    public String toString() {
        return "node " + id + " (127.0.0.1:" + port + ")";
    }
}
