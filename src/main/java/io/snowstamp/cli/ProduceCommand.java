package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

@Command(name = "produce", header = "Produces sample events, or JSON lines from a file or stdin.",
        description = "Produces sample JSON events, or JSON lines from a file or stdin, to a topic. Sample events are "
                + "~80-byte JSON orders keyed by user; each line of --file is one record value.")
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

    @Option(names = "--file", paramLabel = "F", description = "send the lines of F as values ('-' = stdin); empty lines are skipped")
    String file;

    @Override
    public Integer call() throws Exception {
        if ((count != null && count < 0) || rate < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--count and --rate must be >= 0");
        }
        SnowstampConfig loaded = options.load();
        try (KafkaOptions.Connection connection = options.connect(loaded, 0)) {
            String target = topic == null ? connection.config().inputTopic() : topic;
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
            while ((count == null || lines < count) && (line = reader.readLine()) != null) {
                if (!line.isBlank()) {
                    sender.send(null, line.getBytes(StandardCharsets.UTF_8));
                    lines++;
                }
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
            this.producer = new KafkaProducer<>(KafkaSettings.producer(config));
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
