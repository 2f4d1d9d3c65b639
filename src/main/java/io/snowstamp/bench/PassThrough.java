package io.snowstamp.bench;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The floor of the busy failover ({@link BusyFailover}): a Kafka Streams application that copies its input to its output
 * unchanged, each record to the output partition of its input partition as the stamper writes it
 * ({@link BenchTopologies#forward}: so each transaction spans the partitions the stamper's would), with the stamper's own Kafka settings ({@link KafkaSettings#streams}: exactly-once by default, the same
 * commit interval and client tuning) read from the same settings file, run as a child process as the stamper is. What
 * it needs to start and to fail over is what Kafka Streams needs, whoever issues IDs.
 *
 * <p>Arguments as {@code snowstamp run} takes them: {@code --config FILE} and {@code --set KEY=VALUE} pairs. Stops cleanly
 * on SIGTERM.
 */
public final class PassThrough {
    private PassThrough() {
    }

    public static void main(String[] args) throws InterruptedException, ExecutionException, TimeoutException {
        Path file = null;
        Map<String, String> overrides = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--config")) {
                file = Path.of(args[++i]);
            } else if (args[i].equals("--set")) {
                String[] pair = args[++i].split("=", 2);
                overrides.put(pair[0], pair.length > 1 ? pair[1] : "");
            }
        }
        if (file == null) {
            System.err.println("usage: PassThrough --config FILE [--set KEY=VALUE]...");
            System.exit(2);
        }
        SnowstampConfig config = ConfigLoader.load(file, System.getenv(), overrides);
        // the stamper's batches are sized to its output's partitions (KafkaSettings.streams): so are the floor's
        String output = config.topics().output();
        int partitions;
        try (Admin admin = Admin.create(KafkaSettings.client(config.connection()))) {
            partitions = admin.describeTopics(List.of(output)).allTopicNames().get(30, TimeUnit.SECONDS).get(output).partitions().size();
        }
        Properties props = KafkaSettings.streams(config.connection(), config.topics(), partitions);
        KafkaStreams streams = new KafkaStreams(BenchTopologies.forward(config.topics().input(), config.topics().output(),
                BenchTopologies.Carry.NOTHING, null), props);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }
}
