package io.snowstamp.embedded;

import io.snowstamp.SnowstampException;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * A real single-node Apache Kafka broker (KRaft, combined broker + controller) in this JVM.
 * Storage is formatted on first use and kept in {@code dataDir}, so topics and offsets survive a
 * restart. Listens on 127.0.0.1 only. Not a mock: the same broker code as a Kafka server.
 */
public final class EmbeddedKafka implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);
    private static final int NODE_ID = 1;

    private final KafkaRaftServer server;
    private final String bootstrapServers;
    private final Path dataDir;
    private final BrokerLog brokerLog;

    private EmbeddedKafka(KafkaRaftServer server, String bootstrapServers, Path dataDir, BrokerLog brokerLog) {
        this.server = server;
        this.bootstrapServers = bootstrapServers;
        this.dataDir = dataDir;
        this.brokerLog = brokerLog;
    }

    /**
     * Formats {@code dataDir} if needed and starts the broker.
     *
     * @param port     client port on 127.0.0.1; 0 picks a free one
     * @param extra    broker properties that override the defaults (tests use this for short timeouts)
     */
    public static EmbeddedKafka start(Path dataDir, int port, Map<String, String> extra) {
        Path logDir = dataDir.toAbsolutePath().resolve("logs");
        int clientPort = port == 0 ? freePort() : requireFree(port);
        int controllerPort = freePort();
        Properties props = brokerProperties(logDir, clientPort, controllerPort);
        extra.forEach(props::setProperty);
        try {
            Files.createDirectories(logDir);
            format(logDir);
        } catch (Exception e) {
            throw new SnowstampException("cannot prepare the embedded broker's data directory " + logDir + ": " + e.getMessage(), e);
        }
        BrokerLog brokerLog = BrokerLog.redirect(dataDir);
        KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(props, false), Time.SYSTEM);
        try {
            server.startup();
        } catch (RuntimeException e) {
            server.shutdown();
            brokerLog.close();
            throw new SnowstampException("the embedded broker failed to start on 127.0.0.1:" + clientPort
                    + " with data in " + logDir + ": " + e.getMessage(), e);
        }
        String bootstrap = "127.0.0.1:" + clientPort;
        log.info("embedded Kafka broker ready at {} (data in {}, its log in {})", bootstrap, logDir, brokerLog.file());
        return new EmbeddedKafka(server, bootstrap, dataDir, brokerLog);
    }

    static Properties brokerProperties(Path logDir, int clientPort, int controllerPort) {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", String.valueOf(NODE_ID));
        // a static quorum: its address comes from this config on every start, so the ports may change
        p.setProperty("controller.quorum.voters", NODE_ID + "@127.0.0.1:" + controllerPort);
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + clientPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + clientPort);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("log.dirs", logDir.toString());
        // a single node: every internal topic has one replica
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("offsets.topic.num.partitions", "5");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("transaction.state.log.num.partitions", "5");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("default.replication.factor", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        p.setProperty("group.streams.initial.rebalance.delay.ms", "0");
        // a crashed stamper's partitions move on after 10 s instead of Kafka's 45 s default
        p.setProperty("group.streams.min.session.timeout.ms", "1000");
        p.setProperty("group.streams.session.timeout.ms", "10000");
        p.setProperty("group.streams.min.heartbeat.interval.ms", "500");
        p.setProperty("group.streams.heartbeat.interval.ms", "2000");
        // a dead stamper's open transaction blocks its partitions' new owner until it is aborted: look for
        // timed-out transactions every second, not every 10 s (Kafka's default), so failover stays within seconds
        p.setProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
        // topics come from topics/ (snowstamp topics apply); a typo in a topic name must not create one
        p.setProperty("auto.create.topics.enable", "false");
        return p;
    }

    private static void format(Path logDir) throws Exception {
        if (Files.exists(logDir.resolve("meta.properties"))) {
            return;
        }
        new Formatter()
                .setNodeId(NODE_ID)
                .setClusterId(Uuid.randomUuid().toString())
                .addDirectory(logDir.toString())
                .setMetadataLogDirectory(logDir.toString())
                .setControllerListenerName("CONTROLLER")
                .setReleaseVersion(MetadataVersion.latestProduction())
                .setIgnoreFormatted(true)
                .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                .run();
    }

    /**
     * Fails with one line naming the port when something listens on it already. Kafka would find out
     * only deep inside its start-up, after a minute of retries, with a stack trace that never names it.
     */
    private static int requireFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            return port;
        } catch (IOException e) {
            throw new SnowstampException("port " + port + " on 127.0.0.1 is in use (another Kafka broker?): stop what listens"
                    + " there, or choose another port (broker --port; 0 = any free port)", e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new SnowstampException("cannot find a free port on 127.0.0.1: " + e.getMessage(), e);
        }
    }

    /** {@code 127.0.0.1:PORT}. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** Stops the broker and waits for it; data stays on disk. */
    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        brokerLog.close();
        log.info("embedded Kafka broker at {} stopped", bootstrapServers);
    }
}
