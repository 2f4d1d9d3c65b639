package io.snowstamp.cli;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.embedded.LocalBroker;
import io.snowstamp.runtime.Preflight;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** Options of every command that talks to Kafka: configuration plus where Kafka is. */
final class KafkaOptions {
    @Mixin
    ConfigOptions configOptions;

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT,...",
            description = "Kafka to use (same as --set kafka.bootstrap.servers=...). Default: the embedded broker"
                    + " of --data-dir, the one another snowstamp process runs there, else one started in this process.")
    String bootstrapServers;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "data/kafka",
            description = "data directory of the embedded broker (default: ${DEFAULT-VALUE})")
    Path dataDir;

    SnowstampConfig load(Map<String, String> flags) {
        Map<String, String> all = new LinkedHashMap<>(flags);
        if (bootstrapServers != null) {
            all.put(Keys.BOOTSTRAP_SERVERS, bootstrapServers);
        }
        return configOptions.load(all);
    }

    SnowstampConfig load() {
        return load(Map.of());
    }

    /** {@link #connect(SnowstampConfig, int, Duration, String...)} within {@link Preflight#LIMIT}, checking no topic. */
    Connection connect(SnowstampConfig config, int embeddedPort) {
        return connect(config, embeddedPort, Preflight.LIMIT);
    }

    /**
     * The Kafka to talk to: the configured cluster, or the local embedded broker; checked by
     * {@link Preflight} before it is returned, so an unreachable cluster or a missing topic fails
     * here, in seconds, with one line naming the address.
     *
     * @param limit  the command's --timeout: the checks give up after it (or {@link Preflight#LIMIT}, when shorter)
     * @param topics topics that must exist (nulls are skipped)
     */
    Connection connect(SnowstampConfig config, int embeddedPort, Duration limit, String... topics) {
        Connection connection;
        if (!config.connection().embeddedBroker()) {
            connection = new Connection(config, null);
        } else {
            LocalBroker broker = LocalBroker.obtain(dataDir, embeddedPort, Map.of());
            connection = new Connection(config.withBootstrapServers(broker.bootstrapServers()), broker);
        }
        try {
            if (!connection.ownsBroker()) {
                Preflight.reachable(connection.config().connection(), limit);
            }
            connection.requireTopics(limit, topics);
            return connection;
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /** A configuration with bootstrap servers, and the local broker behind it when there is one. */
    record Connection(SnowstampConfig config, LocalBroker broker) implements AutoCloseable {
        /** Whether this process started the broker itself. */
        boolean ownsBroker() {
            return broker != null && broker.owned();
        }

        boolean embedded() {
            return broker != null;
        }

        /** Fails with one line naming the first of {@code topics} (nulls skipped) that does not exist. */
        void requireTopics(Duration limit, String... topics) {
            var named = Arrays.stream(topics).filter(Objects::nonNull).toList();
            if (!named.isEmpty()) {
                Preflight.requireTopics(config.connection(), limit, named);
            }
        }

        @Override
        public void close() {
            if (broker != null) {
                broker.close();
            }
        }
    }
}
