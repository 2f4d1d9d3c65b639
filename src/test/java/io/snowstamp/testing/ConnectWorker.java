package io.snowstamp.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * Apache Kafka's own Connect worker in standalone mode, as a child JVM, run the way
 * {@code bin/connect-standalone.sh worker.properties connector.properties...} runs it:
 * {@code org.apache.kafka.connect.cli.ConnectStandalone} of {@code connect-runtime} (the test
 * classpath, written by the build to {@code target/connect/classpath.txt}), with the connector plugins
 * the build put in {@code target/connect/plugins} (Debezium's JDBC sink, Apicurio's Avro converter) on {@code plugin.path},
 * each loaded in its own class loader. Its REST listener is on 127.0.0.1, any free port.
 */
public final class ConnectWorker implements AutoCloseable {
    /** What the worker logs once it runs (its connectors start right after). */
    private static final String STARTED = "Kafka Connect started";

    private final ChildJvm child;

    private ConnectWorker(ChildJvm child) {
        this.child = child;
    }

    /**
     * Starts a worker on {@code bootstrapServers} with the given connector configurations (written to
     * files under {@code work}) and waits until it runs; logs go to {@code target/fault-logs/<name>/}.
     */
    public static ConnectWorker start(Path work, String name, String bootstrapServers, List<Properties> connectors) throws Exception {
        return start(work, name, bootstrapServers, connectors, Map.of());
    }

    /** {@link #start(Path, String, String, List)} with some of the worker's properties set otherwise ({@code workerSettings}). */
    public static ConnectWorker start(Path work, String name, String bootstrapServers, List<Properties> connectors,
                                      Map<String, String> workerSettings) throws Exception {
        Path dir = Path.of(System.getProperty("snowstamp.connect.dir", "target/connect"));
        Path classpath = dir.resolve("classpath.txt");
        if (!Files.exists(classpath) || !Files.isDirectory(dir.resolve("plugins"))) {
            throw new IllegalStateException(dir + " has no classpath.txt and plugins/: the build writes them in the"
                    + " pre-integration-test phase ('mvn verify')");
        }
        Files.createDirectories(work);
        Map<String, String> settings = new HashMap<>(Map.of(
                "bootstrap.servers", bootstrapServers,
                "offset.storage.file.filename", work.resolve("offsets").toString(),
                "offset.flush.interval.ms", "1000",
                "plugin.path", dir.resolve("plugins").toAbsolutePath().toString(),
                // plugins found through their ServiceLoader manifests (Kafka's and Debezium's have them): no classpath scan
                "plugin.discovery", "service_load",
                "listeners", "http://127.0.0.1:0",
                "key.converter", "org.apache.kafka.connect.storage.StringConverter",
                "value.converter", "org.apache.kafka.connect.storage.StringConverter"));
        settings.putAll(workerSettings);
        Path worker = write(work.resolve("worker.properties"), settings);
        Path logback = work.resolve("logback.xml");
        Files.writeString(logback, """
                <configuration>
                  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
                    <target>System.err</target>
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
                  </appender>
                  <root level="INFO"><appender-ref ref="STDERR"/></root>
                </configuration>
                """);
        List<String> command = new ArrayList<>(List.of(ChildJvm.java(), "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Dlogback.configurationFile=" + logback.toAbsolutePath(),
                "-cp", Files.readString(classpath).trim(),
                "org.apache.kafka.connect.cli.ConnectStandalone", worker.toString()));
        for (int i = 0; i < connectors.size(); i++) {
            command.add(write(work.resolve("connector-" + i + ".properties"), connectors.get(i)).toString());
        }
        ChildJvm child = ChildJvm.startCommand(Stamper.LOGS.resolve(name), "connect", work, Map.of(), command);
        try {
            child.awaitLog(STARTED, 180);
        } catch (AssertionError | Exception e) {
            child.close();
            throw e;
        }
        return new ConnectWorker(child);
    }

    /** A connector configuration from a test resource (e.g. {@code /connect/events-to-postgres.properties}). */
    public static Properties connector(String resource) throws IOException {
        Properties properties = new Properties();
        properties.load(new java.io.StringReader(resource(resource)));
        return properties;
    }

    /** The text of a test resource (UTF-8). */
    public static String resource(String resource) throws IOException {
        try (var in = ConnectWorker.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("no test resource " + resource);
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** Waits (up to 60 s) until the worker has logged {@code text}; fails with its errors otherwise. */
    public void awaitLog(String text) throws Exception {
        try {
            child.awaitLog(text, 60);
        } catch (AssertionError e) {
            throw new AssertionError("the Connect worker did not log '" + text + "' within 60 s; its errors:\n" + errors());
        }
    }

    /** The worker's ERROR lines and causes, for a failure message (its full log is in target/fault-logs/). */
    public String errors() throws IOException {
        return child.stderr().lines().filter(line -> line.contains(" ERROR ") || line.startsWith("Caused by"))
                .collect(Collectors.joining("\n"));
    }

    private static Path write(Path file, Map<?, ?> properties) throws IOException {
        Properties p = new Properties();
        p.putAll(properties);
        try (var out = Files.newBufferedWriter(file)) {
            p.store(out, null);
        }
        return file;
    }

    /** Stops the worker (SIGTERM: a clean stop that commits its offsets), or kills it after 60 s. */
    @Override
    public void close() throws InterruptedException {
        if (child.isAlive()) {
            child.terminate(60);
        }
    }
}
