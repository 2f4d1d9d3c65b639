package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

@Command(name = "produce", header = "Produces sample events, or JSON lines from a file or stdin.",
        description = "Produces sample JSON events, or JSON lines from a file or stdin, to a topic. Sample events are "
                + "~80-byte JSON orders keyed by user; each line of --file (UTF-8 text) is one record value.",
        footer = {"", "Examples:", "  snowstamp produce --count 10000 --rate 1000",
                "  snowstamp produce --topic events.raw --file orders.jsonl"})
final class ProduceCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--topic", paramLabel = "T", description = "topic (default: input.topic)")
    String topic;

    @Option(names = "--count", paramLabel = "N",
            description = "number of sample events (default: 1000); with --file, the most lines to send (default: all)")
    Long count;

    @Option(names = "--rate", paramLabel = "R", defaultValue = "0", description = "records per second (default: as fast as possible)")
    long rate;

    @Option(names = "--file", paramLabel = "F", description = "send the lines of F as values ('-' = stdin); empty lines"
            + " are skipped (default: sample events)")
    String file;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
            description = "give up if Kafka does not take a record in this time (default: ${DEFAULT-VALUE})")
    Duration limit;

    @Override
    public Integer call() throws Exception {
        if ((count != null && count < 0) || rate < 0) {
            throw new ParameterException(spec.commandLine(), "--count and --rate must be >= 0");
        }
        if (file != null && !file.equals("-") && !Files.isRegularFile(Path.of(file))) {
            throw new ParameterException(spec.commandLine(), "--file=" + file + " is invalid: "
                    + (Files.exists(Path.of(file)) ? "not a regular file" : "the file does not exist"));
        }
        SnowstampConfig loaded = options.load();
        String target = topic == null ? loaded.topics().input() : topic;
        try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit, target)) {
            long sent = file == null ? sendSamples(connection.config(), target) : sendLines(connection.config(), target);
            spec.commandLine().getOut().println("produced " + sent + " records to " + target);
        }
        return 0;
    }

    private long sendSamples(SnowstampConfig config, String target) {
        SampleEvents events = new SampleEvents(System.nanoTime());
        long total = count == null ? 1000 : count;
        try (Sender sender = new Sender(config, target, total)) {
            for (long n = 0; n < total; n++) {
                sender.send(events.key(n), events.value(n));
            }
            return sender.finish();
        }
    }

    private long sendLines(SnowstampConfig config, String target) throws IOException {
        try (BufferedReader reader = file.equals("-")
                ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                : Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8);
             Sender sender = new Sender(config, target, 0)) {
            String line;
            long lines = 0;
            long read = 0;
            try {
                while ((count == null || lines < count) && (line = reader.readLine()) != null) {
                    read++;
                    if (!line.isBlank()) {
                        sender.send(null, line.getBytes(StandardCharsets.UTF_8));
                        lines++;
                    }
                }
            } catch (CharacterCodingException e) {
                // the lines before were sent: say how far it got, so a rerun can skip them
                throw new ParameterException(spec.commandLine(), "--file=" + (file.equals("-") ? "stdin" : file)
                        + " is invalid: line " + (read + 1) + " is not UTF-8 text (accepted: text, one record value per line;"
                        + " " + sender.finish() + " records before it were sent)");
            }
            return sender.finish();
        }
    }

    /** Sends at the requested rate, remembers the first failure and fails the command with it. */
    private final class Sender implements AutoCloseable {
        private final KafkaProducer<byte[], byte[]> producer;
        private final String target;
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final Progress progress;
        private final long started = System.nanoTime();
        private long sent;

        Sender(SnowstampConfig config, String target, long total) {
            this.producer = new KafkaProducer<>(bounded(KafkaSettings.producer(config.connection())));
            this.target = target;
            this.progress = new Progress(spec.commandLine().getErr(), "produced", total);
        }

        void send(byte[] key, byte[] value) {
            if (failure.get() != null) {
                throw new SnowstampException("cannot produce to " + target + ": " + failure.get().getMessage(), failure.get());
            }
            pace();
            producer.send(new ProducerRecord<>(target, key, value), (metadata, error) -> {
                if (error != null) {
                    failure.compareAndSet(null, error);
                }
            });
            sent++;
            progress.update(sent);
        }

        private void pace() {
            if (rate <= 0) {
                return;
            }
            long due = started + sent * 1_000_000_000L / rate;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SnowstampException("interrupted while producing", e);
                }
            }
        }

        /** The producer settings with every wait bounded by --timeout. */
        private Properties bounded(Properties props) {
            long ms = Math.max(1, limit.toMillis());
            long request = Math.min(30_000, ms);
            long linger = Long.parseLong(props.getProperty(ProducerConfig.LINGER_MS_CONFIG, "5"));
            props.setProperty(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(ms));
            props.setProperty(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(request));
            // the producer refuses a delivery timeout below linger + request timeout
            props.setProperty(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(Math.max(ms, request + linger)));
            return props;
        }

        long finish() {
            producer.flush();
            progress.done();
            if (failure.get() != null) {
                throw new SnowstampException("cannot produce to " + target + ": " + failure.get().getMessage(), failure.get());
            }
            return sent;
        }

        @Override
        public void close() {
            producer.close();
        }
    }
}
