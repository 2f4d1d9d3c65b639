package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.stream.Names;
import io.snowstamp.verify.Verifier;
import io.snowstamp.verify.VerifyReport;
import org.apache.kafka.common.header.Header;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;

@Command(name = "verify", header = "Checks a stamped topic for duplicate, missing and extra records.",
        description = "Scans a stamped topic (read_committed, up to its end when the scan starts) for duplicate IDs, "
                + "IDs that do not increase within a partition, and records without an ID; with --source, also for "
                + "input records that were never stamped (missing) or stamped more than once (extra), using the "
                + "snowstamp-src header. Prints the problems found, then a last line records=N duplicates=D "
                + "missing=M extra=E. Exit 1 on any problem.")
final class VerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--topic", paramLabel = "T", description = "stamped topic (default: output.topic)")
    String topic;

    @Option(names = "--source", paramLabel = "S", description = "input topic to account for, record by record")
    String source;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "10m",
            description = "give up if a topic cannot be read to its end in this time (default: ${DEFAULT-VALUE})")
    String timeout;

    @Override
    public Integer call() {
        Duration limit = CliDurations.parse(spec, "--timeout", timeout);
        SnowstampConfig loaded = options.load();
        try (KafkaOptions.Connection connection = options.connect(loaded, 0)) {
            String target = topic == null ? connection.config().outputTopic() : topic;
            VerifyReport report = verify(connection.config(), target, source, limit, spec.commandLine().getErr());
            PrintWriter out = spec.commandLine().getOut();
            report.problems().forEach(out::println);
            out.println(report.summaryLine());
            return report.clean() ? 0 : 1;
        }
    }

    /** Reads {@code target} (and {@code source}, when given) to their ends and checks them. */
    static VerifyReport verify(SnowstampConfig config, String target, String source, Duration limit, PrintWriter err) {
        Verifier verifier = new Verifier(target, source);
        Progress progress = new Progress(err, "verified", 0);
        long[] seen = {0};
        TopicReader.readToEnd(KafkaSettings.consumer(config), target, limit, record -> {
            verifier.output(record.partition(), record.offset(), header(record.headers().lastHeader(Names.ID_HEADER)),
                    header(record.headers().lastHeader(Names.SOURCE_HEADER)));
            progress.update(++seen[0]);
        });
        if (source != null) {
            TopicReader.readToEnd(KafkaSettings.consumer(config), source, limit,
                    record -> verifier.source(record.partition(), record.offset()));
        }
        progress.done();
        return verifier.finish();
    }

    private static String header(Header header) {
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
