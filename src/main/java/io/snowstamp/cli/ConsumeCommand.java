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
                + "records, or when no record arrived for --idle-timeout.",
        footer = {"", "Examples:", "  snowstamp consume --topic events.stamped --max 10",
                "  snowstamp consume --bootstrap-servers kafka:9092 --idle-timeout 30s"})
final class ConsumeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--topic", paramLabel = "T", description = "topic (default: output.topic)")
    String topic;

    @Option(names = "--max", paramLabel = "N", description = "stop after N records (default: no limit)")
    Long max;

    @Option(names = {"--idle-timeout", "--idle"}, paramLabel = "D", defaultValue = "5s",
            description = "stop once no record arrived for this long (default: ${DEFAULT-VALUE})")
    Duration idle;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
            description = "give up if Kafka or the topic's metadata does not answer in this time (default: ${DEFAULT-VALUE})")
    Duration limit;

    @Override
    public Integer call() {
        if (max != null && max < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--max=" + max + " is invalid: accepted 0 or more");
        }
        SnowstampConfig loaded = options.load();
        String target = topic == null ? loaded.topics().output() : topic;
        try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit, target)) {
            PrintWriter out = spec.commandLine().getOut();
            long printed = 0;
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(KafkaSettings.consumer(connection.config().connection()))) {
                List<TopicPartition> partitions = TopicReader.partitions(consumer, target, limit);
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
