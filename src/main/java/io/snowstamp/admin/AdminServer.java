package io.snowstamp.admin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.snowstamp.config.AdminSettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.Errors;
import io.snowstamp.runtime.StreamsRunner;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The admin HTTP server of {@code run}, on the JDK's {@link HttpServer} (no web framework), one
 * handler per endpoint, served by two named daemon threads:
 * <ul>
 *   <li>{@code GET /health/live} — 200 while Kafka Streams has not died (ERROR), else 503;</li>
 *   <li>{@code GET /health/ready} — 200 when Kafka Streams is RUNNING and every assigned task has
 *       restored its state and started, else 503 with the reason;</li>
 *   <li>{@code GET /metrics} — Prometheus text format (OpenMetrics on request);</li>
 *   <li>{@code GET /state} — every partition's generator state across all instances
 *       ({@code ?local=true}: this instance only).</li>
 * </ul>
 * Answers are JSON except {@code /metrics}; no endpoint shows configuration values (secrets stay in).
 * Binds {@code 127.0.0.1} unless {@code admin.bind} says otherwise; port 0 picks a free port
 * ({@link #getPort()}).
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    /** The endpoints, for help texts and 404 answers. */
    public static final List<String> ENDPOINTS = List.of("/health/live", "/health/ready", "/metrics", "/state");

    private final HttpServer server;
    private final ExecutorService executor;
    private final StamperMetrics metrics;
    private final StateView state;
    private final String advertisedHost;

    private AdminServer(HttpServer server, ExecutorService executor, StamperMetrics metrics, StateView state, String advertisedHost) {
        this.server = server;
        this.executor = executor;
        this.metrics = metrics;
        this.state = state;
        this.advertisedHost = advertisedHost;
    }

    /**
     * Binds and starts the server for a runner that may not have started yet (call
     * {@code runner.advertise(server.advertisedAddress())} before {@code runner.start()}).
     *
     * @throws io.snowstamp.SnowstampException when the address cannot be bound (port in use, unknown address)
     */
    public static AdminServer start(SnowstampConfig config, StreamsRunner runner, LongSupplier clock) {
        AdminSettings settings = config.admin();
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        Health health = new Health(runner);
        StamperMetrics metrics = new StamperMetrics(runner, config.connection().applicationId(), clock);
        StateView state = new StateView(config, runner, clock, json);
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(settings.bind()), Math.max(settings.port(), 0)), 16);
        } catch (IOException e) {
            metrics.close();
            // one line naming the port: the CLI prints only the message of a SnowstampException
            throw new io.snowstamp.SnowstampException(e instanceof java.net.BindException
                    ? "cannot start the admin server: port " + settings.port() + " on " + settings.bind() + " is in use or not"
                    + " available (--admin-port, admin.port; 0 = any free port)"
                    : "cannot start the admin server on " + settings.bind() + ":" + settings.port() + " (admin.bind, admin.port): "
                    + Errors.oneLine(e), e);
        }
        ExecutorService executor = Executors.newFixedThreadPool(2, daemonThreads("snowstamp-admin"));
        server.setExecutor(executor);
        server.createContext("/health/live", new JsonHandler(json, exchange -> Answer.of(health.live())));
        server.createContext("/health/ready", new JsonHandler(json, exchange -> Answer.of(health.ready())));
        server.createContext("/metrics", new MetricsHandler(metrics));
        server.createContext("/state", new JsonHandler(json, exchange -> new Answer(200, state.render(isLocal(exchange)))));
        server.createContext("/", new JsonHandler(json, AdminServer::notFound));
        startAsDaemon(server);
        AdminServer admin = new AdminServer(server, executor, metrics, state, settings.advertisedHost(hostName()));
        state.advertisedAs(new HostInfo(admin.advertisedHost, admin.getPort()));
        log.atInfo().addKeyValue("event", "admin-started").addKeyValue("port", admin.getPort())
                .log("admin server on http://{}:{} ({}), advertised as {}", settings.bind(), admin.getPort(),
                        String.join(" ", ENDPOINTS), admin.advertisedAddress());
        return admin;
    }

    /** The port the server listens on (the chosen one when configured with 0). */
    public int getPort() {
        return server.getAddress().getPort();
    }

    /** {@code host:port} under which other instances reach this server ({@code application.server}). */
    public String advertisedAddress() {
        return advertisedHost + ":" + getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        metrics.close();
    }

    /** Threads named {@code prefix-N}, daemon: the admin server never keeps the JVM alive. */
    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** The JDK's dispatcher thread inherits the daemon flag of the thread that starts the server. */
    private static void startAsDaemon(HttpServer server) {
        Thread starter = daemonThreads("snowstamp-admin-start").newThread(server::start);
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.stop(0);
            throw new IllegalStateException("interrupted while starting the admin server", e);
        }
    }

    private static boolean isLocal(HttpExchange exchange) {
        String query = exchange.getRequestURI().getQuery();
        return query != null && List.of(query.split("&")).contains("local=true");
    }

    private static Answer notFound(HttpExchange exchange) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "no such endpoint: " + exchange.getRequestURI().getPath());
        body.put("endpoints", ENDPOINTS);
        return new Answer(404, body);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    /** An HTTP status and a body to write as JSON. */
    private record Answer(int status, Object body) {
        static Answer of(Health.Check check) {
            return new Answer(check.ok() ? 200 : 503, check.body());
        }
    }

    /** What a JSON endpoint computes for one request. */
    @FunctionalInterface
    private interface Endpoint {
        Answer answer(HttpExchange exchange) throws Exception;
    }

    /** GET/HEAD only; answers 200 or 503 (404 for unknown paths) with a JSON body; 500 with one line on failure. */
    private static final class JsonHandler implements HttpHandler {
        private final ObjectMapper json;
        private final Endpoint endpoint;

        JsonHandler(ObjectMapper json, Endpoint endpoint) {
            this.json = json;
            this.endpoint = endpoint;
        }

        @Override
        public void handle(HttpExchange exchange) throws IOException {
            try (exchange) {
                if (!allowed(exchange)) {
                    return;
                }
                int status;
                byte[] body;
                try {
                    Answer answer = endpoint.answer(exchange);
                    status = answer.status();
                    body = json.writeValueAsBytes(answer.body());
                } catch (Exception e) {
                    log.warn("admin {} failed: {}", exchange.getRequestURI(), Errors.oneLine(e), e);
                    status = 500;
                    body = json.writeValueAsBytes(Map.of("error", Errors.oneLine(e)));
                }
                send(exchange, status, "application/json", body);
            }
        }
    }

    /** Prometheus exposition. */
    private static final class MetricsHandler implements HttpHandler {
        private final StamperMetrics metrics;

        MetricsHandler(StamperMetrics metrics) {
            this.metrics = metrics;
        }

        @Override
        public void handle(HttpExchange exchange) throws IOException {
            try (exchange) {
                if (!allowed(exchange)) {
                    return;
                }
                String accept = exchange.getRequestHeaders().getFirst("Accept");
                byte[] body = metrics.scrape(accept).getBytes(StandardCharsets.UTF_8);
                send(exchange, 200, StamperMetrics.contentType(accept), body);
            }
        }
    }

    private static boolean allowed(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        if (method.equals("GET") || method.equals("HEAD")) {
            return true;
        }
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        exchange.sendResponseHeaders(405, -1);
        return false;
    }

    private static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
