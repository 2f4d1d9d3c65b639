package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.CachedClock;
import io.snowstamp.id.DecodedId;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.verify.VerifyReport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;

@Command(name = "demo", header = "Runs the whole job once on the embedded broker and verifies it.",
        description = "The whole job on the embedded broker: starts the broker (data in --data-dir) and the stamper, "
                + "creates the topics, produces --events sample events, prints the stamped records as they arrive, "
                + "stops the stamper, verifies the whole output topic against the input, prints a one-line summary "
                + "and exits (0 when verify is clean). Run it again: the IDs continue above the previous run's.",
        footer = {"", "Examples:", "  snowstamp demo", "  snowstamp demo --events 100000 --show 5 --data-dir /tmp/snowstamp-demo"})
final class DemoCommand implements Callable<Integer> {
    private static final Duration WAIT = Duration.ofSeconds(120);

    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--events", paramLabel = "N", defaultValue = "1000", description = "events to produce (default: ${DEFAULT-VALUE})")
    int events;

    @Option(names = "--show", paramLabel = "N", defaultValue = "20",
            description = "stamped records to print (default: ${DEFAULT-VALUE}; -1 = all)")
    int show;

    @Override
    public Integer call() throws Exception {
        if (events < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--events must be >= 1");
        }
        Map<String, String> flags = new LinkedHashMap<>();
        flags.put(Keys.INSTANCE_ID, "demo");
        SnowstampConfig loaded = options.load(flags);
        if (loaded.idMode() == SnowstampConfig.IdMode.SEQUENCE) {
            throw new io.snowstamp.config.ConfigException(Keys.ID_MODE, loaded.idMode(), "snowflake here: demo shows snowflake"
                    + " IDs; for sequences see the README (tags create, run, verify --mode sequence)");
        }
        options.configOptions.requireIssuableLayout();
        PrintWriter out = spec.commandLine().getOut();
        try (KafkaOptions.Connection connection = options.connect(loaded, 0)) {
            SnowstampConfig config = connection.config();
            out.println("broker: " + config.connection().kafka().get("bootstrap.servers") + (connection.embedded() ? " (embedded, data in "
                    + options.dataDir + ")" : ""));
            TopicsCommand.apply(config, Path.of("topics"), WAIT).forEach(line -> out.println("topics: " + line));
            out.flush();
            List<ConsumerRecord<byte[], byte[]>> stamped;
            try (StreamsRunner runner = new StreamsRunner(config, CachedClock::millis)) {
                runner.start();
                if (!runner.awaitRunning(WAIT)) {
                    throw new SnowstampException("the stamper did not reach RUNNING within " + WAIT.toSeconds() + " s");
                }
                Map<TopicPartition, Long> outputStart = outputEnd(config);
                Set<String> produced = produce(config);
                out.println("produced " + produced.size() + " events to " + config.topics().input());
                stamped = awaitStamped(config, outputStart, produced, out);
            }
            VerifyReport report = VerifyCommand.verify(config, config.topics().output(), config.topics().input(),
                    Duration.ofMinutes(5), spec.commandLine().getErr());
            report.problems().forEach(out::println);
            out.println(report.summaryLine());
            out.println(summary(config, stamped, report));
            return report.clean() ? 0 : 1;
        }
    }

    private Map<TopicPartition, Long> outputEnd(SnowstampConfig config) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(KafkaSettings.consumer(config.connection()))) {
            List<TopicPartition> partitions = io.snowstamp.recovery.TopicReader.partitions(consumer, config.topics().output(), WAIT);
            consumer.assign(partitions);
            return consumer.endOffsets(partitions, WAIT);
        }
    }

    /** Produces the sample events and returns their provenance keys {@code topic/partition/offset}. */
    private Set<String> produce(SnowstampConfig config) throws Exception {
        SampleEvents sample = new SampleEvents(System.nanoTime());
        List<Future<RecordMetadata>> sent = new ArrayList<>(events);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(KafkaSettings.producer(config.connection()))) {
            for (int n = 0; n < events; n++) {
                sent.add(producer.send(new ProducerRecord<>(config.topics().input(), sample.key(n), sample.value(n))));
            }
            producer.flush();
        }
        Set<String> keys = new HashSet<>();
        for (Future<RecordMetadata> future : sent) {
            RecordMetadata metadata = future.get();
            keys.add(metadata.topic() + "/" + metadata.partition() + "/" + metadata.offset());
        }
        return keys;
    }

    /** Reads the output from where it ended before producing until every produced event is there. */
    private List<ConsumerRecord<byte[], byte[]>> awaitStamped(SnowstampConfig config, Map<TopicPartition, Long> start,
                                                              Set<String> produced, PrintWriter out) {
        Set<String> waiting = new HashSet<>(produced);
        List<ConsumerRecord<byte[], byte[]>> stamped = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        Progress progress = new Progress(spec.commandLine().getErr(), "stamped", produced.size());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(KafkaSettings.consumer(config.connection()))) {
            consumer.assign(start.keySet());
            start.forEach(consumer::seek);
            while (!waiting.isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new SnowstampException(waiting.size() + " of " + produced.size() + " events were not stamped within "
                            + WAIT.toSeconds() + " s");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    String src = IdHeader.sourceText(record.headers(), config.topics().input(), record.partition());
                    if (src != null && waiting.remove(src)) {
                        stamped.add(record);
                        if (show < 0 || stamped.size() <= show) {
                            out.println(RecordJson.line(record));
                        }
                    }
                }
                progress.update(stamped.size());
                out.flush();
            }
        }
        progress.done();
        if (show >= 0 && stamped.size() > show) {
            out.println("... " + (stamped.size() - show) + " more stamped records (--show -1 prints all)");
        }
        return stamped;
    }

    private static String summary(SnowstampConfig config, List<ConsumerRecord<byte[], byte[]>> stamped, VerifyReport report) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        Set<Long> workers = new TreeSet<>();
        for (ConsumerRecord<byte[], byte[]> record : stamped) {
            Long id = RecordJson.id(record);
            if (id != null) {
                min = Math.min(min, id);
                max = Math.max(max, id);
                DecodedId decoded = config.ids().layout().decode(id);
                workers.add(decoded.worker());
            }
        }
        return "demo: stamped " + stamped.size() + " events with IDs " + min + ".." + max + " (workers " + workers
                + "); whole topic verified: " + (report.clean() ? "clean" : "PROBLEMS FOUND") + ", " + report.summaryLine();
    }
}
