package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.embedded.LocalBroker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

@Command(name = "broker", header = "Runs only the embedded Kafka broker, in the foreground.",
        description = "Runs only the embedded Kafka broker (a real single-node KRaft broker) in the foreground, until "
                + "SIGTERM or Ctrl-C. Prints bootstrap.servers=HOST:PORT once ready; data stays in --data-dir. Any "
                + "Kafka client can use it; snowstamp commands without --bootstrap-servers find it through "
                + "--data-dir. Exits 0 after a clean stop.",
        footer = {"", "Examples:", "  snowstamp broker", "  snowstamp broker --port 0 --data-dir /tmp/kafka"})
final class BrokerCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--port", paramLabel = "P", defaultValue = "9092", description = "client port on 127.0.0.1 (default: ${DEFAULT-VALUE}; 0 = any free port)")
    int port;

    @Option(names = "--data-dir", paramLabel = "D", defaultValue = "data/kafka", description = "data directory (default: ${DEFAULT-VALUE})")
    Path dataDir;

    @Option(names = "--broker-config", paramLabel = "KEY=VALUE",
            description = "a Kafka broker property for this broker (repeatable), e.g. group.streams.session.timeout.ms=6000"
                    + " (default: none)")
    Map<String, String> brokerConfig = new java.util.LinkedHashMap<>();

    @Override
    public Integer call() throws InterruptedException {
        if (port < 0 || port > 65_535) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--port=" + port + " is invalid: accepted 0..65535");
        }
        CleanStop.exitZeroOnSignal();
        LocalBroker broker = LocalBroker.obtain(dataDir, port, brokerConfig);
        if (!broker.owned()) {
            throw new SnowstampException("a broker already runs on " + dataDir + " at " + broker.bootstrapServers()
                    + " (started by another snowstamp process)");
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "snowstamp-broker-shutdown"));
        spec.commandLine().getOut().println("bootstrap.servers=" + broker.bootstrapServers());
        spec.commandLine().getOut().flush();
        stopped.await();
        return 0;
    }
}
