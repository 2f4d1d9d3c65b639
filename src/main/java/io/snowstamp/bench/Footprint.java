package io.snowstamp.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * What one stamper instance costs per partition: for an input of N partitions it starts a stamper
 * ({@code snowstamp run}) as a child process of this JVM's class path — so the figures are the
 * stamper's alone, not this process's nor an embedded broker's — and measures its resident set
 * (from {@code /proc}, not only the heap), threads, open files and state directory once it holds
 * all N partitions, the time from its start to the first stamped record of EVERY partition, and
 * the failover time: a second instance joins, the first is killed with SIGKILL, {@link #RECORDS_PER_PARTITION}
 * records are produced to every partition, and the clock runs until every partition has stamped the
 * first of them (it stamps again: the failover), then until it has stamped all of them (caught up: after
 * a takeover at 1,024 partitions each transaction was seen to carry one record per partition, so a backlog
 * of a few records takes a few transactions over every partition). Linux only for RSS, threads
 * and open files (-1 elsewhere). Topics and the application are fresh per measurement and deleted
 * afterwards.
 */
public final class Footprint {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Records per partition before the start, and again before the kill. */
    private static final int RECORDS_PER_PARTITION = 3;

    /** The figures of one partition count; sizes in bytes, times in seconds. */
    public record Figures(int partitions, long rssBytes, long peakRssBytes, int threads, int openFiles, long stateDirBytes,
                          double startSeconds, double failoverSeconds, double caughtUpSeconds, Conditions conditions) {
    }

    /**
     * What the run ran under: the processing guarantee of the measured processes, the busy loops beside them
     * ({@link Neighbour}) and the system's one-minute load average at the start and at the end of the run (-1: unknown).
     */
    public record Conditions(String guarantee, int neighbourCores, double loadAverageBefore, double loadAverageAfter) {
        /** The conditions on one line, for the progress and result lines. */
        public String line() {
            return String.format(java.util.Locale.ROOT, "%s, neighbour %d cores, load %.2f -> %.2f", guarantee, neighbourCores,
                    loadAverageBefore, loadAverageAfter);
        }
    }

    private final ConnectionSettings base;
    private final Path work;
    private final List<String> javaOptions;
    private final String mainClass;
    private final Duration timeout;
    private final ConnectionSettings.Guarantee guarantee;
    /** Settings of the measured stamper processes beyond the connection's ({@code bench --footprint-set}). */
    private final Map<String, String> settings;

    /**
     * @param base        connection settings ({@code kafka.*}) for this process and the stamper children
     * @param work        where the children's state directories, settings and logs go
     * @param javaOptions JVM options of the stamper children (its heap limit decides much of the RSS)
     * @param mainClass   the command-line entry point whose {@code run} starts a stamper
     * @param timeout     how long each wait (every partition stamped, failover) may take
     * @param guarantee   the processing guarantee of the measured processes (stamper and pass-through alike)
     */
    public Footprint(ConnectionSettings base, Path work, List<String> javaOptions, String mainClass, Duration timeout,
                     ConnectionSettings.Guarantee guarantee) {
        this(base, work, javaOptions, mainClass, timeout, guarantee, Map.of());
    }

    /** @param settings settings of the measured stamper processes beyond the connection's (they win over the bench's own) */
    public Footprint(ConnectionSettings base, Path work, List<String> javaOptions, String mainClass, Duration timeout,
                     ConnectionSettings.Guarantee guarantee, Map<String, String> settings) {
        this.settings = Map.copyOf(settings);
        this.guarantee = guarantee;
        this.base = base;
        this.work = work;
        this.javaOptions = List.copyOf(javaOptions);
        this.mainClass = mainClass;
        this.timeout = timeout;
    }

    /** The guarantee of the measured processes, as {@code processing.guarantee} spells it. */
    public String guarantee() {
        return guarantee.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Measures one partition count (see the class comment); {@code neighbourCores} only names the busy loops running
     * beside it (started by the caller) in the figures.
     */
    public Figures measure(int partitions, int neighbourCores) throws IOException, InterruptedException {
        double loadBefore = Neighbour.loadAverage();
        String run = "snowstamp-footprint-" + partitions + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100_000;
        String in = run + "-in";
        String out = run + "-out";
        String dlq = run + "-dlq";
        Path dir = Files.createDirectories(work.resolve(run));
        Path settings = writeSettings(dir, run, in, out, dlq);
        try (Admin admin = Admin.create(KafkaSettings.client(base))) {
            TopicAdmin.apply(admin, List.of(new TopicSpec(in, partitions, (short) -1, Map.of()),
                    new TopicSpec(out, partitions, (short) -1, Map.of()), new TopicSpec(dlq, 1, (short) -1, Map.of())));
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(KafkaSettings.producer(base),
                    new ByteArraySerializer(), new ByteArraySerializer());
                 Stamped stamped = new Stamped(base, out, partitions)) {
                produce(producer, in, partitions);
                long start = System.nanoTime();
                Process a = launch(settings, dir, "a");
                Process b = null;
                try {
                    stamped.awaitEvery(1, start, timeout, a);
                    double startSeconds = (System.nanoTime() - start) / 1e9;
                    Thread.sleep(2000);     // a moment to settle: commits, the first heartbeats of the lease
                    long[] memory = memory(a.pid());
                    int threads = (int) memory[2];
                    int files = openFiles(a.pid());
                    long state = size(dir.resolve("state"));

                    b = launch(settings, dir, "b");
                    // both instances stamp (the group has rebalanced onto two members) before one dies
                    awaitBothStamp(producer, stamped, in, partitions, a, b);
                    a.destroyForcibly();    // SIGKILL on Linux: no leave-group, the group waits for the session timeout
                    long killed = System.nanoTime();
                    a.waitFor(30, TimeUnit.SECONDS);
                    produce(producer, in, partitions);
                    stamped.awaitEvery(2 * RECORDS_PER_PARTITION + 1, killed, timeout, b);
                    double failoverSeconds = (System.nanoTime() - killed) / 1e9;
                    stamped.awaitEvery(3 * RECORDS_PER_PARTITION, killed, timeout, b);
                    double caughtUpSeconds = (System.nanoTime() - killed) / 1e9;
                    return new Figures(partitions, memory[0], memory[1], threads, files, state, startSeconds, failoverSeconds,
                            caughtUpSeconds, new Conditions(guarantee(), neighbourCores, loadBefore, Neighbour.loadAverage()));
                } finally {
                    stop(a);
                    stop(b);
                }
            } finally {
                deleteRun(admin, run, List.of(in, out, dlq));
            }
        }
    }

    /** Produces a second round and waits until every partition stamped it, while both instances live. */
    private void awaitBothStamp(KafkaProducer<byte[], byte[]> producer, Stamped stamped, String in, int partitions,
                                Process a, Process b) throws InterruptedException {
        // the second member joins with a rebalance; records produced now stamp on whichever instance owns them after it
        Thread.sleep(8000);
        if (!a.isAlive() || !b.isAlive()) {
            throw new SnowstampException("a footprint stamper exited early (exit " + (a.isAlive() ? b.exitValue() : a.exitValue())
                    + "); see its log under " + work);
        }
        produce(producer, in, partitions);
        stamped.awaitEvery(2 * RECORDS_PER_PARTITION, System.nanoTime(), timeout, a, b);
    }

    private static void produce(KafkaProducer<byte[], byte[]> producer, String topic, int partitions) {
        for (int round = 0; round < RECORDS_PER_PARTITION; round++) {
            for (int p = 0; p < partitions; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, ("{\"p\":" + p + "}").getBytes(StandardCharsets.UTF_8)));
            }
        }
        producer.flush();
    }

    /** The children's settings, in a file (mode 600 where possible): the {@code kafka.*} keys may hold secrets. */
    Path writeSettings(Path dir, String app, String in, String out, String dlq) throws IOException {
        Properties props = new Properties();
        base.kafka().forEach((key, value) -> props.setProperty("kafka." + key, value));
        props.setProperty("application.id", app);
        props.setProperty("input.topic", in);
        props.setProperty("output.topic", out);
        props.setProperty("dlq.topic", dlq);
        props.setProperty("state.dir", dir.resolve("state").toString());
        props.setProperty("processing.guarantee", guarantee());
        props.setProperty("id.worker-registry", "off");     // a measurement, not a deployment: claim nothing in the user's registry
        settings.forEach(props::setProperty);
        Path file = dir.resolve("stamper.properties");
        Files.createFile(file);
        try {
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the file is in a fresh temporary directory of this user
        }
        try (OutputStream os = Files.newOutputStream(file)) {
            props.store(os, "snowstamp bench --footprint-partitions");
        }
        return file;
    }

    private Process launch(Path settings, Path dir, String instance) throws IOException {
        return launch(settings, dir, instance, null);
    }

    /** The work directory of the measured processes (their settings, state and logs). */
    Path work() {
        return work;
    }

    /**
     * Starts a measured process: {@code snowstamp run}, or {@code main} (another entry point that reads the same
     * arguments) when not null.
     */
    Process launch(Path settings, Path dir, String instance, String main) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(javaOptions);
        // -Dsnowstamp.footprint.classpath=OTHER.jar measures another build of the stamper (a before/after comparison)
        String classPath = System.getProperty("snowstamp.footprint.classpath", System.getProperty("java.class.path"));
        command.addAll(main == null ? List.of("-cp", classPath, mainClass, "run") : List.of("-cp", classPath, main));
        command.addAll(List.of(
                "--config", settings.toString(), "--set", "instance.id=" + instance));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(instance + ".log").toFile())
                .start();
    }

    static void stop(Process process) throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();      // SIGTERM: a clean stop
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** VmRSS, VmHWM (bytes) and Threads of {@code /proc/PID/status}; -1 each where there is no {@code /proc}. */
    static long[] memory(long pid) {
        long[] figures = {-1, -1, -1};
        try {
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
                String[] f = line.split("\\s+");
                switch (f[0]) {
                    case "VmRSS:" -> figures[0] = Long.parseLong(f[1]) * 1024;
                    case "VmHWM:" -> figures[1] = Long.parseLong(f[1]) * 1024;
                    case "Threads:" -> figures[2] = Long.parseLong(f[1]);
                    default -> {
                    }
                }
            }
        } catch (IOException e) {
            // not Linux: unknown
        }
        return figures;
    }

    /** Entries of {@code /proc/PID/fd} (files, sockets, pipes); -1 where there is no {@code /proc}. */
    static int openFiles(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd"))) {
            return (int) fds.count();
        } catch (IOException e) {
            return -1;
        }
    }

    /** Bytes of every file under {@code dir} (0 when it does not exist). */
    static long size(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    void deleteRun(Admin admin, String app, List<String> topics) {
        try {
            Set<String> doomed = new HashSet<>(topics);
            admin.listTopics().names().get(30, TimeUnit.SECONDS).stream().filter(t -> t.startsWith(app + "-")).forEach(doomed::add);
            admin.deleteTopics(doomed).all().get(60, TimeUnit.SECONDS);
            admin.deleteConsumerGroups(List.of(app)).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            // best effort: what is left is named snowstamp-footprint-*
        }
    }

    /** Reads the output topic read_committed and counts stamped records per partition. */
    private static final class Stamped implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final int[] counts;

        Stamped(ConnectionSettings base, String topic, int partitions) {
            Properties props = KafkaSettings.client(base);
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
            props.remove(ConsumerConfig.GROUP_ID_CONFIG);
            this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            List<TopicPartition> all = IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(topic, p)).toList();
            consumer.assign(all);
            consumer.seekToBeginning(all);
            this.counts = new int[partitions];
        }

        /**
         * Waits until every partition holds at least {@code atLeast} stamped records; fails after
         * {@code timeout} from {@code since}, or as soon as one of {@code stampers} has exited.
         */
        void awaitEvery(int atLeast, long since, Duration timeout, Process... stampers) {
            long deadline = since + timeout.toNanos();
            while (IntStream.of(counts).anyMatch(c -> c < atLeast)) {
                for (Process stamper : stampers) {
                    if (!stamper.isAlive()) {
                        throw new SnowstampException("a measured stamper exited with status " + stamper.exitValue()
                                + " before every partition stamped; its log is next to its settings under the bench's temporary directory");
                    }
                }
                if (System.nanoTime() > deadline) {
                    long behind = IntStream.of(counts).filter(c -> c < atLeast).count();
                    throw new SnowstampException(behind + " of " + counts.length + " partitions had fewer than " + atLeast
                            + " stamped records after " + timeout.toSeconds() + " s");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    counts[record.partition()]++;
                }
            }
        }

        @Override
        public void close() {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    /** The figures as a table, one row per partition count, each next to its goal where the issue set one. */
    public static void printTable(List<Figures> rows, PrintWriter out) {
        out.printf("%10s %10s %10s %8s %10s %10s %16s %10s %10s  %s%n", "partitions", "RSS", "peak RSS", "threads", "open files",
                "state dir", "all stamped in", "failover", "caught up", "guarantee, neighbour, load");
        for (Figures f : rows) {
            out.printf("%10d %6d MiB %6d MiB %8d %10d %6.1f MiB %14.1f s %8.1f s %8.1f s  %s%n", f.partitions(), mib(f.rssBytes()),
                    mib(f.peakRssBytes()), f.threads(), f.openFiles(), f.stateDirBytes() / 1048576.0, f.startSeconds(),
                    f.failoverSeconds(), f.caughtUpSeconds(), f.conditions().line());
        }
        out.println("goals at 1,024 partitions (one instance): every partition stamped within 15 s of the start, failover"
                + " (every partition stamps again after the SIGKILL) within 10 s, RSS < 1024 MiB, state dir < 50 MiB");
    }

    /** One partition count's figures on one line (progress, while the next count is measured). */
    public static String line(Figures f) {
        return String.format(java.util.Locale.ROOT, "%d partitions: RSS %d MiB (peak %d MiB), %d threads, %d open files, state dir %.1f MiB,"
                        + " every partition stamped %.1f s after the start, failover %.1f s (caught up %.1f s); %s", f.partitions(),
                mib(f.rssBytes()), mib(f.peakRssBytes()), f.threads(), f.openFiles(), f.stateDirBytes() / 1048576.0, f.startSeconds(),
                f.failoverSeconds(), f.caughtUpSeconds(), f.conditions().line());
    }

    /** The figures as one JSON object. */
    public static String json(List<Figures> rows) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        root.put("cores", Runtime.getRuntime().availableProcessors());
        ArrayNode array = root.putArray("footprint");
        for (Figures f : rows) {
            ObjectNode row = array.addObject();
            row.put("partitions", f.partitions());
            row.put("rssMiB", mib(f.rssBytes()));
            row.put("peakRssMiB", mib(f.peakRssBytes()));
            row.put("threads", f.threads());
            row.put("openFiles", f.openFiles());
            row.put("stateDirBytes", f.stateDirBytes());
            row.put("allStampedSeconds", Math.round(f.startSeconds() * 10) / 10.0);
            row.put("failoverSeconds", Math.round(f.failoverSeconds() * 10) / 10.0);
            row.put("caughtUpSeconds", Math.round(f.caughtUpSeconds() * 10) / 10.0);
            row.set("conditions", JSON.valueToTree(f.conditions()));
        }
        return JSON.writeValueAsString(root);
    }

    private static long mib(long bytes) {
        return bytes < 0 ? -1 : bytes / (1024 * 1024);
    }
}
