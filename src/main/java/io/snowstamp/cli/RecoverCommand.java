package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ApplicationGroup;
import io.snowstamp.recovery.ChangelogReader;
import io.snowstamp.recovery.ChangelogUnavailableException;
import io.snowstamp.recovery.ChangelogWriter;
import io.snowstamp.recovery.OutputScan;
import io.snowstamp.recovery.Replication;
import io.snowstamp.recovery.ResumePlan;
import io.snowstamp.recovery.StateImport;
import io.snowstamp.registry.HandOver;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.state.WorkerState;
import io.snowstamp.stream.Names;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;

@Command(name = "recover", header = "Computes safe resume points from changelog + output topic; seeds a new deployment.",
        description = "For every partition p, computes a resume point above everything ever issued: the larger of the "
                + "high-water mark (max of lastId and reservedUntil) in the changelog of --from-changelog and the highest "
                + "ID of p's worker in partition p of --from-output (its tail, read backwards until an ID of the worker "
                + "shows up, as the stamper's tail guard does; every record with --full-scan; records of open and "
                + "aborted transactions count). The workers are those of the source application's claim in the worker "
                + "registry (else id.worker-offset). Prints one line per partition. Dry run by default: --apply writes seed "
                + "worker states (holder 'recover', lastId = reservedUntil = resume, the old epoch) into the changelog "
                + "of --to-application-id, creating it (compacted, as many partitions as the input topic) when missing, "
                + "so that an application started with that id resumes above every old ID. A partition whose target "
                + "state is already at or above its resume point is kept. A missing or empty source changelog is "
                + "noted and the output topic alone decides. A --to-application-id other than the source is a hand-over: "
                + "--apply also releases the source's claim in the worker registry, with the resume points as marks, and "
                + "claims the same workers for the new application, which joins that claim when it starts (the dry run "
                + "says what will happen to the registry). The hand-over needs the source stopped cleanly, or its claim "
                + "stale (crashed) and --force. Refuses to apply while the target application, or for a hand-over the "
                + "source, has active members; everything is checked before anything is written. Exit 1 when neither "
                + "source holds anything.",
        footer = {"", "Examples:", "  snowstamp recover --application-id orders",
                "  snowstamp recover --from-changelog old-app --to-application-id new-app",
                "  snowstamp recover --from-changelog old-app --to-application-id new-app --apply"})
final class RecoverCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions options;

    @Option(names = "--application-id", paramLabel = "ID", description = "same as --set application.id=ID: the"
            + " application recovered, when --from-changelog does not name another (default: application.id)")
    String applicationId;

    @Option(names = "--from-changelog", paramLabel = "APP", arity = "0..1", fallbackValue = "",
            description = "application whose changelog to read (default, and without APP: application.id)")
    String fromChangelog;

    @Option(names = "--from-output", paramLabel = "TOPIC", description = "stamped topic to scan (default: output.topic)")
    String fromOutput;

    @Option(names = "--to-application-id", paramLabel = "NEW",
            description = "application whose changelog --apply seeds (default: the --from-changelog application)")
    String toApplicationId;

    @Option(names = "--force", description = "with --to-application-id: hand over the source's claim in the worker registry even"
            + " though it is stale (no clean stop and no heartbeat for longer than registry.stale-after: crashed); check first that"
            + " no instance of it runs anywhere")
    boolean force;

    @Option(names = "--full-scan", description = "read every record of the output topic, not only the tail of each partition")
    boolean fullScan;

    @Option(names = "--apply", description = "write the seeds (without it: print them, write nothing)")
    boolean apply;

    @Option(names = "--format", paramLabel = "F", defaultValue = "table",
            description = "table (for a terminal) or json (one object per partition and line) (default: ${DEFAULT-VALUE})")
    ChangelogCommand.Format format;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "10m",
            description = "give up if the changelogs or the full scan cannot be read to their end in this time"
                    + " (default: ${DEFAULT-VALUE}); the tail of a partition gets recovery.tail-guard-timeout")
    Duration limit;

    @Override
    public Integer call() {
        SnowstampConfig loaded = options.load(applicationId == null ? Map.of() : Map.of(Keys.APPLICATION_ID, applicationId));
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String source = fromChangelog == null || fromChangelog.isEmpty() ? loaded.connection().applicationId() : fromChangelog;
        String target = toApplicationId == null ? source : toApplicationId;
        boolean handOver = !target.equals(source);
        if (force && !handOver) {
            throw new ConfigException("--force", true, "only with --to-application-id naming another application than " + source
                    + " (it hands over a stale claim of " + source + " in the worker registry)");
        }
        try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit);
             Admin admin = Admin.create(KafkaSettings.client(connection.config().connection()))) {
            SnowstampConfig config = connection.config();
            String output = fromOutput == null ? config.topics().output() : fromOutput;
            int partitions = ChangelogWriter.partitionCount(admin, output, limit).orElseThrow(() -> new SnowstampException(
                    "output topic " + output + " does not exist: nothing to scan (check --from-output and --bootstrap-servers)"));

            if (apply) {
                ApplicationGroup.requireStopped(admin, target, limit, "seeding its changelog");
            }
            List<String> running = ApplicationGroup.activeMembers(admin, source, limit);
            if (apply && handOver) {
                // a hand-over gives the source's workers to the target: both must not stamp with them at once
                ApplicationGroup.requireStopped(running, source, "handing its workers over to " + target);
            } else if (!running.isEmpty()) {
                err.println("warning: application " + source + " is still running (" + String.join(", ", running)
                        + "): IDs it issues after this scan are not covered");
            }
            try (RecoverRegistry registry = RecoverRegistry.open(config, admin, limit)) {
                HandOver handing = registry.plan(source, target, output, partitions, force);
                return recover(config, admin, registry, handing, source, target, output, partitions, out, err);
            }
        }
    }

    private int recover(SnowstampConfig config, Admin admin, RecoverRegistry registry, HandOver handing, String source, String target,
                        String output, int partitions, PrintWriter out, PrintWriter err) {
        IdLayout layout = config.ids().layout();
        long workerOffset = handing.firstWorker();
        Map<Integer, WorkerState> sourceStates = new TreeMap<>();
        String sourceNote = null;
        try {
            ChangelogReader.latest(KafkaSettings.consumer(config.connection()), source, limit)
                    .forEach((key, entry) -> sourceStates.put(key, entry.state()));
        } catch (ChangelogUnavailableException e) {
            sourceNote = "changelog topic " + e.topic() + (e.reason() == ChangelogUnavailableException.Reason.MISSING
                    ? " does not exist" : " is empty") + ": resume points come from " + output + " alone";
        }
        Map<Integer, Long> highest = OutputScan.highest(KafkaSettings.client(config.connection()), output, partitions, layout,
                config.ids().datacenterId(), workerOffset, fullScan, config.recovery().tailGuardTimeout(), limit);
        Map<Integer, WorkerState> targetStates = target.equals(source) ? sourceStates
                : ChangelogReader.latestOrNone(KafkaSettings.consumer(config.connection()), target, limit);
        ResumePlan plan = ResumePlan.plan(partitions, sourceStates, highest, targetStates, layout, workerOffset,
                System.currentTimeMillis());

        // in JSON mode stdout carries only the rows, for scripts; what surrounds them goes to stderr
        PrintWriter notes = format == ChangelogCommand.Format.json ? err : out;
        if (sourceNote != null) {
            notes.println("note: " + sourceNote);
        }
        if (plan.nothingIssued()) {
            throw new SnowstampException("nothing to recover: changelog " + Names.changelogTopic(source) + " holds no state and "
                    + output + " holds no ID of workers " + workerOffset + ".." + (workerOffset + partitions - 1)
                    + " in layout " + layout.fingerprint() + (fullScan ? "" : " in its tail (try --full-scan)")
                    + "; check --from-changelog, --from-output and the id.* settings");
        }
        notes.println("recover " + Names.changelogTopic(source) + " + " + output + " (" + (fullScan ? "full scan" : "tail of each partition")
                + ") -> " + Names.changelogTopic(target));
        if (format == ChangelogCommand.Format.json) {
            plan.rows().forEach(row -> out.println(json(row, layout)));
        } else {
            print(plan, layout, out);
        }
        Map<Integer, WorkerState> seeds = plan.seeds();
        String topic = Names.changelogTopic(target);
        if (!apply) {
            notes.println(seeds.isEmpty() ? "nothing to write: " + topic + " already holds marks at or above every resume point"
                    : "dry run: nothing written; --apply writes " + seeds.size() + " seed" + (seeds.size() == 1 ? "" : "s") + " into " + topic);
            println(notes, registry.describe(handing, false));
        } else {
            HandOver checked = registry.recheck(handing, output, partitions, force);
            if (seeds.isEmpty()) {
                notes.println("nothing to write: " + topic + " already holds marks at or above every resume point");
            } else {
                int inputPartitions = StateImport.inputPartitions(admin, config.topics().input(), limit);
                if (inputPartitions != partitions) {
                    throw new SnowstampException("input topic " + config.topics().input() + " has " + inputPartitions + " partitions but "
                            + output + " has " + partitions + ": the stamper needs them equal");
                }
                Optional<Replication> created = ChangelogWriter.ensureTopic(admin, topic, partitions, limit);
                ChangelogWriter.write(KafkaSettings.producer(config.connection()), topic, seeds, limit);
                notes.println("seeded " + seeds.size() + " partition" + (seeds.size() == 1 ? "" : "s") + " of " + topic
                        + created.map(r -> " (created: compacted, " + partitions + " partitions, " + r.describe() + ")").orElse(""));
            }
            println(notes, registry.apply(checked, plan));
            notes.println("start the stamper with application.id=" + target + registry.startSettings(checked));
        }
        out.flush();
        err.flush();
        return 0;
    }

    private static void println(PrintWriter out, String line) {
        if (line != null) {
            out.println(line);
        }
    }

    private static String json(ResumePlan.Row row, IdLayout layout) {
        Long millis = StateText.idMillis(layout, row.resume());
        return JsonText.of(new RowLine(row.partition(), row.worker(), row.fromChangelog(), row.fromOutput(), row.resume(),
                millis == null ? null : StateText.iso(millis), row.action().name().toLowerCase(java.util.Locale.ROOT)));
    }

    /** One row of the plan in {@code --format json}; -1 where a source holds nothing for the partition. */
    record RowLine(int partition, long worker, long fromChangelog, long fromOutput, long resume, String resumeTime, String action) {
    }

    private static void print(ResumePlan plan, IdLayout layout, PrintWriter out) {
        TextTable table = new TextTable("partition", "worker", "from changelog", "from output", "resume", "resume time", "action");
        for (ResumePlan.Row row : plan.rows()) {
            String action = switch (row.action()) {
                case SEED -> "seed";
                case KEEP -> "keep (target at " + row.target().highWaterMark() + ")";
                case NONE -> "none (nothing issued)";
            };
            table.add(row.partition(), row.worker(), StateText.id(row.fromChangelog()), StateText.id(row.fromOutput()),
                    StateText.id(row.resume()), StateText.idTime(layout, row.resume()), action);
        }
        table.print(out);
    }
}
