package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.Durations;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The check every command that talks to Kafka makes first, so that a wrong address or a missing
 * topic ends in one line within seconds instead of minutes of client retries:
 * <ol>
 *   <li>a plain TCP connection to each bootstrap address (up to {@link #CONNECT} each): when none
 *       accepts, the command fails at once, naming the addresses and why (refused, unknown host,
 *       no answer);</li>
 *   <li>an Admin {@code describeCluster} within the given limit ({@link #LIMIT} at most): a port that
 *       accepts connections but does not speak Kafka, or refuses the credentials, fails here;</li>
 *   <li>on request, that the named topics exist.</li>
 * </ol>
 * The Kafka clients' own retry warnings never reach the console (logback.xml); these lines replace them.
 */
public final class Preflight {
    /** The longest a TCP connection attempt to one bootstrap address may take. */
    public static final Duration CONNECT = Duration.ofSeconds(5);
    /** The longest the Kafka checks may take, whatever a command's --timeout says. */
    public static final Duration LIMIT = Duration.ofSeconds(15);

    private Preflight() {
    }

    /**
     * Fails unless a Kafka broker answers at the configured bootstrap servers within {@code limit}
     * (capped at {@link #LIMIT}).
     *
     * @throws SnowstampException naming the bootstrap servers and what failed
     */
    public static void reachable(ConnectionSettings connection, Duration limit) {
        String servers = servers(connection);
        probeTcp(servers, min(limit, CONNECT));
        Duration bound = min(limit, LIMIT);
        Admin admin = Admin.create(properties(connection, bound));
        try {
            admin.describeCluster().nodes().get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // the Admin's own timeout (set to the same bound) usually fires first: the same situation as below
            if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
                throw noAnswer(servers, bound);
            }
            throw failure(servers, "", e.getCause());
        } catch (TimeoutException e) {
            throw noAnswer(servers, bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while connecting to Kafka at " + servers, e);
        } finally {
            close(admin);
        }
    }

    /**
     * Fails unless every topic exists (checked within {@code limit}, capped at {@link #LIMIT}).
     *
     * @throws SnowstampException naming the first missing topic and the bootstrap servers
     */
    public static void requireTopics(ConnectionSettings connection, Duration limit, List<String> topics) {
        String servers = servers(connection);
        Duration bound = min(limit, LIMIT);
        Admin admin = Admin.create(properties(connection, bound));
        try {
            for (String topic : topics) {
                Throwable error;
                try {
                    admin.describeTopics(List.of(topic)).allTopicNames().get(bound.toMillis(), TimeUnit.MILLISECONDS);
                    continue;
                } catch (ExecutionException e) {
                    error = e.getCause();
                } catch (TimeoutException e) {
                    error = e;
                }
                if (error instanceof UnknownTopicOrPartitionException) {
                    throw new SnowstampException("topic " + topic + " does not exist at " + servers
                            + ": check the topic name, or create it ('snowstamp topics apply' creates the configured topics)");
                }
                // the Admin's own timeout (the same bound) or ours, whichever fired first
                if (error instanceof TimeoutException || error instanceof org.apache.kafka.common.errors.TimeoutException) {
                    throw new SnowstampException("Kafka at " + servers + " did not describe topic " + topic + " within "
                            + Durations.format(bound));
                }
                throw failure(servers, " describing topic " + topic, error);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while checking topics at " + servers, e);
        } finally {
            close(admin);
        }
    }

    /**
     * Without waiting: {@code Admin.close()} waits for pending calls without end, and a call to a port
     * that accepts connections but never answers stays pending after its own timeout (seen: 10 min).
     */
    private static void close(Admin admin) {
        admin.close(Duration.ZERO);
    }

    private static SnowstampException noAnswer(String servers, Duration bound) {
        return new SnowstampException("Kafka at " + servers + " did not answer within " + Durations.format(bound)
                + ": the address accepts connections but no Kafka broker answered there (wrong port, TLS or SASL settings"
                + " missing in kafka.*?)");
    }

    private static SnowstampException failure(String servers, String doing, Throwable cause) {
        String what = cause instanceof AuthenticationException ? "refused the credentials (kafka.sasl.* / kafka.ssl.*)"
                : cause instanceof AuthorizationException ? "refused access (ACLs)"
                : "failed";
        return new SnowstampException("Kafka at " + servers + " " + what + doing + ": " + Errors.oneLine(cause), cause);
    }

    /** Tries each address; returns at the first that accepts a connection, else fails naming all of them. */
    private static void probeTcp(String servers, Duration timeout) {
        List<String> failures = new ArrayList<>();
        for (String address : servers.split(",")) {
            String entry = address.trim();
            String hostPort = entry.replaceFirst("^[a-zA-Z_]+://", "");   // config/BootstrapServers checked the shape
            int colon = hostPort.lastIndexOf(':');
            String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
            int port = Integer.parseInt(hostPort.substring(colon + 1));
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(host, port), (int) Math.max(1, timeout.toMillis()));
                return;
            } catch (UnknownHostException e) {
                failures.add(entry + ": unknown host");
            } catch (ConnectException e) {
                failures.add(entry + ": connection refused");
            } catch (SocketTimeoutException e) {
                failures.add(entry + ": no answer within " + Durations.format(timeout));
            } catch (IOException | IllegalArgumentException e) {
                failures.add(entry + ": " + Errors.oneLine(e));
            }
        }
        throw new SnowstampException("cannot reach Kafka at " + servers + " (" + String.join("; ", failures)
                + "): is the broker running there? check --bootstrap-servers or kafka.bootstrap.servers");
    }

    /** The plain-client properties with every Admin timeout at {@code bound}, so no call outlives it. */
    private static Properties properties(ConnectionSettings connection, Duration bound) {
        Properties props = KafkaSettings.client(connection);
        String ms = Long.toString(Math.max(1, bound.toMillis()));
        props.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
        props.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        props.setProperty(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, ms);
        props.setProperty(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, ms);
        return props;
    }

    private static String servers(ConnectionSettings connection) {
        return connection.kafka().getOrDefault("bootstrap.servers", "");
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
