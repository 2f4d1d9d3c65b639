package io.snowstamp.cli;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.embedded.LocalBroker;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Options of every command that talks to Kafka: configuration plus where Kafka is. */
final class KafkaOptions {
    @Mixin
    ConfigOptions configOptions;

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT,...",
            description = "Kafka to use (same as --set kafka.bootstrap.servers=...). Without it: the embedded broker"
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

    /** The Kafka to talk to: the configured cluster, or the local embedded broker. */
    Connection connect(SnowstampConfig config, int embeddedPort) {
        if (!config.embeddedBroker()) {
            return new Connection(config, null);
        }
        LocalBroker broker = LocalBroker.obtain(dataDir, embeddedPort, Map.of());
        return new Connection(config.withBootstrapServers(broker.bootstrapServers()), broker);
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

        @Override
        public void close() {
            if (broker != null) {
                broker.close();
            }
        }
    }
}
