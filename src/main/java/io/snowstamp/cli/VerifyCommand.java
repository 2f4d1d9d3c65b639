package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.recovery.TopicReader;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.IdHeader;
import io.snowstamp.verify.SequenceChecker;
import io.snowstamp.verify.Verifier;
import io.snowstamp.verify.VerifyReport;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.errors.internals.ExceptionHandlerUtils;
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
                + "missing=M extra=E. Exit 1 on any problem. With --mode sequence (id.mode=sequence output) the "
                + "checks are per tag (snowstamp-tag header): no number twice, numbers increasing in output order; "
                + "one line per tag with its gaps (skipped numbers, not a problem) comes first. With several --topic "
                + "options, each topic is checked on its own and every ID found in more than one of them counts as a "
                + "duplicate (the check before the outputs of several deployments meet in one table).",
        footer = {"", "Examples:", "  snowstamp verify --topic events.stamped --source events.raw --dlq events.dlq",
                "  snowstamp verify --topic orders.stamped --topic payments.stamped --timeout 30m"})
final class VerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--topic", paramLabel = "T", description = "stamped topic (default: output.topic); repeat it to check"
            + " several topics, each on its own and for IDs shared between them (snowflake mode, without --source)")
    java.util.List<String> topics;

    @Option(names = "--source", paramLabel = "S", description = "input topic to account for, record by record (default: none, no source check)")
    String source;

    @Option(names = "--dlq", paramLabel = "D", description = "dead-letter topic whose records account for source records"
            + " too (with --source): every input record must then be in exactly one of --topic and --dlq (default: none)")
    String dlq;

    @Option(names = "--mode", paramLabel = "M", description = "snowflake or sequence: what the topic holds (default: id.mode)")
    String mode;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "10m",
            description = "give up if a topic cannot be read to its end in this time (default: ${DEFAULT-VALUE})")
    Duration limit;

    @Override
    public Integer call() {
        if (dlq != null && source == null) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--dlq needs --source");
        }
        SnowstampConfig loaded = options.load();
        boolean sequence = mode == null ? loaded.idMode() == SnowstampConfig.IdMode.SEQUENCE : sequenceMode(mode);
        if (topics != null && topics.size() > 1 && (sequence || source != null)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "several --topic options check snowflake IDs across topics: not with --source, --dlq or --mode sequence");
        }
        boolean across = topics != null && topics.size() > 1;
        String target = topics == null ? loaded.topics().output() : topics.get(0);
        String[] needed = across ? topics.toArray(String[]::new) : new String[] {target, source, dlq};
        try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit, needed)) {
            if (across) {
                return verifyAcross(connection.config(), limit);
            }
            if (sequence) {
                return verifySequence(connection.config(), target, limit);
            }
            Verifier verifier = new Verifier(target, source);
            read(connection.config(), verifier, target, dlq, source, limit, spec.commandLine().getErr());
            VerifyReport report = verifier.finish();
            PrintWriter out = spec.commandLine().getOut();
            report.problems().forEach(out::println);
            if (dlq != null) {
                out.println("dead letters: " + verifier.deadLetters() + " in " + dlq);
            }
            out.println(report.summaryLine());
            return report.clean() ? 0 : 1;
        }
    }

    /**
     * Several topics: each is verified on its own (duplicates within it, order per partition), and
     * every ID found in more than one topic counts as a duplicate too.
     */
    private int verifyAcross(SnowstampConfig config, Duration limit) {
        PrintWriter out = spec.commandLine().getOut();
        java.util.List<String> distinct = topics.stream().distinct().toList();
        io.snowstamp.verify.CrossTopicCheck across = new io.snowstamp.verify.CrossTopicCheck(distinct);
        long records = 0;
        long duplicates = 0;
        boolean clean = true;
        for (int t = 0; t < distinct.size(); t++) {
            String target = distinct.get(t);
            int index = t;
            Verifier verifier = new Verifier(target, null);
            Progress progress = new Progress(spec.commandLine().getErr(), "verified", 0);
            long[] seen = {0};
            TopicReader.readToEnd(KafkaSettings.consumer(config.connection()), target, limit, record -> {
                String id = IdHeader.idText(record.headers());
                verifier.output(record.partition(), record.offset(), id, null);
                if (id != null) {
                    try {
                        across.add(index, IdHeader.parse(id));
                    } catch (IllegalArgumentException ignored) {
                        // malformed: the verifier reports it as unstamped
                    }
                }
                progress.update(++seen[0]);
            });
            progress.done();
            VerifyReport report = verifier.finish();
            report.problems().forEach(problem -> out.println(target + ": " + problem));
            out.println(target + ": " + report.summaryLine());
            records += report.records();
            duplicates += report.duplicates();
            clean &= report.clean();
        }
        io.snowstamp.verify.CrossTopicCheck.Result shared = across.finish();
        shared.examples().forEach(out::println);
        out.println("shared between topics: " + shared.shared());
        out.println("records=" + records + " duplicates=" + (duplicates + shared.shared()) + " missing=0 extra=0");
        return clean && shared.shared() == 0 ? 0 : 1;
    }

    private boolean sequenceMode(String text) {
        return switch (text.toLowerCase(java.util.Locale.ROOT)) {
            case "sequence" -> true;
            case "snowflake" -> false;
            default -> throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--mode=" + text + " is invalid: accepted snowflake or sequence");
        };
    }

    /**
     * Sequence mode: {@link SequenceChecker} checks the numbers per tag; a {@link Verifier} fed with
     * a stand-in ID per record (partition and offset, unique and increasing) accounts for the source
     * records through the provenance headers.
     */
    private int verifySequence(SnowstampConfig config, String target, Duration limit) {
        SequenceChecker checker = new SequenceChecker(target);
        Verifier verifier = source == null ? null : new Verifier(target, source);
        Progress progress = new Progress(spec.commandLine().getErr(), "verified", 0);
        long[] seen = {0};
        TopicReader.readToEnd(KafkaSettings.consumer(config.connection()), target, limit, record -> {
            checker.output(record.partition(), record.offset(), header(record.headers().lastHeader(IdHeader.TAG)),
                    header(record.headers().lastHeader(IdHeader.ID)));
            if (verifier != null) {
                verifier.output(record.partition(), record.offset(), Long.toString(((long) record.partition() << 40) + record.offset()),
                        header(record.headers().lastHeader(IdHeader.SOURCE)));
            }
            progress.update(++seen[0]);
        });
        if (verifier != null) {
            readDeadLettersAndSource(config, verifier, dlq, source, limit);
        }
        progress.done();
        SequenceChecker.Report report = checker.finish();
        VerifyReport accounted = verifier == null ? null : verifier.finish();
        PrintWriter out = spec.commandLine().getOut();
        report.tags().forEach(tag -> out.println(tag.line()));
        report.problems().forEach(out::println);
        if (accounted != null) {
            accounted.problems().forEach(out::println);
        }
        if (dlq != null) {
            out.println("dead letters: " + verifier.deadLetters() + " in " + dlq);
        }
        long missing = accounted == null ? 0 : accounted.missing();
        long extra = accounted == null ? 0 : accounted.extra();
        out.println("records=" + report.records() + " duplicates=" + report.duplicates() + " missing=" + missing + " extra=" + extra);
        return report.clean() && missing == 0 && extra == 0 ? 0 : 1;
    }

    /** Reads {@code target} (and {@code source}, when given) to their ends and checks them. */
    static VerifyReport verify(SnowstampConfig config, String target, String source, Duration limit, PrintWriter err) {
        Verifier verifier = new Verifier(target, source);
        read(config, verifier, target, null, source, limit, err);
        return verifier.finish();
    }

    /** Feeds the output, the dead letters (when {@code dlq} is given) and the source to the verifier. */
    static void read(SnowstampConfig config, Verifier verifier, String target, String dlq, String source, Duration limit,
                     PrintWriter err) {
        Progress progress = new Progress(err, "verified", 0);
        long[] seen = {0};
        TopicReader.readToEnd(KafkaSettings.consumer(config.connection()), target, limit, record -> {
            verifier.output(record.partition(), record.offset(), IdHeader.idText(record.headers()),
                    IdHeader.sourceText(record.headers(), source, record.partition()));
            progress.update(++seen[0]);
        });
        readDeadLettersAndSource(config, verifier, dlq, source, limit);
        progress.done();
    }

    private static void readDeadLettersAndSource(SnowstampConfig config, Verifier verifier, String dlq, String source,
                                                 Duration limit) {
        if (dlq != null) {
            TopicReader.readToEnd(KafkaSettings.consumer(config.connection()), dlq, limit, record -> verifier.deadLetter(
                    header(record.headers().lastHeader(ExceptionHandlerUtils.HEADER_ERRORS_TOPIC_NAME)),
                    (int) number(record.headers().lastHeader(ExceptionHandlerUtils.HEADER_ERRORS_PARTITION_NAME)),
                    number(record.headers().lastHeader(ExceptionHandlerUtils.HEADER_ERRORS_OFFSET_NAME))));
        }
        if (source != null) {
            TopicReader.readToEnd(KafkaSettings.consumer(config.connection()), source, limit,
                    record -> verifier.source(record.partition(), record.offset()));
        }
    }

    private static long number(Header header) {
        String text = header(header);
        try {
            return text == null ? -1 : Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String header(Header header) {
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
