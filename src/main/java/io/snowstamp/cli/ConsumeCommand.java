package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.runtime.KafkaSettings;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "consume", header = "Prints the records of a topic as JSON lines (read_committed).",
        description = "Prints the records of a topic from the beginning, one JSON object per line: "
                + "{\"partition\",\"offset\",\"key\",\"id\",\"value\"} (id from header snowstamp-id; value as JSON "
                + "when it parses, else as a string). Reads read_committed with no consumer group; stops at --max "
                + "records, or when no record arrived for --timeout.")
final class ConsumeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--topic", paramLabel = "T", description = "topic (default: output.topic)")
    String topic;

    @Option(names = "--max", paramLabel = "N", description = "stop after N records (default: no limit)")
    Long max;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "5s",
            description = "stop once no record arrived for this long (default: ${DEFAULT-VALUE})")
    String timeout;

    @Override
    public Integer call() {
        Duration idle = CliDurations.parse(spec, "--timeout", timeout);
        SnowstampConfig loaded = options.load();
        try (KafkaOptions.Connection connection = options.connect(loaded, 0)) {
            String target = topic == null ? connection.config().outputTopic() : topic;
            PrintWriter out = spec.commandLine().getOut();
            long printed = 0;
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(KafkaSettings.consumer(connection.config()))) {
                List<TopicPartition> partitions = TopicReader.partitions(consumer, target, Duration.ofSeconds(30));
                if (partitions.isEmpty()) {
                    throw new io.snowstamp.SnowstampException("topic " + target + " does not exist");
                }
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                long lastRecord = System.nanoTime();
                while ((max == null || printed < max) && System.nanoTime() - lastRecord < idle.toNanos()) {
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                        if (max != null && printed >= max) {
                            break;
                        }
                        out.println(RecordJson.line(record));
                        printed++;
                        lastRecord = System.nanoTime();
                    }
                    out.flush();
                }
            }
        }
        return 0;
    }
}
