package io.snowstamp.cli;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ApplicationGroup;
import io.snowstamp.recovery.ResumePlan;
import io.snowstamp.registry.Claim;
import io.snowstamp.registry.RegistryLog;
import io.snowstamp.registry.RegistryView;
import io.snowstamp.registry.ReleaseCheck;
import io.snowstamp.registry.ReleaseMarks;
import io.snowstamp.registry.WorkerRegistry;
import io.snowstamp.runtime.KafkaSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "workers", header = "Shows and releases worker ranges in the worker registry: list, release.",
        description = "The worker registry (registry.topic, default snowstamp-workers) records which application holds which "
                + "worker range in which ID space (id.space) and datacenter; a stamper claims its range at start.",
        subcommands = {WorkersCommand.ListClaims.class, WorkersCommand.Release.class})
final class WorkersCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "list", header = "Lists every claim of the worker registry with its state and heartbeat age.",
            description = "One row per claim (an application's range, or an extension of it): ID space, datacenter, "
                    + "application, workers, state, last heartbeat and its age, layout fingerprint, input -> output. "
                    + "States: active (heartbeat within registry.stale-after), stopped (the application stopped cleanly; "
                    + "the range stays its own), stale (no heartbeat for longer than registry.stale-after: crashed or "
                    + "frozen; 'workers release --force' recovers it), denied (lost to an earlier claim and never used), "
                    + "released (free for reuse above the recorded marks), withdrawn. --format json prints one JSON "
                    + "object per claim and line: {\"space\", \"datacenter\", \"application\", \"firstWorker\", \"count\", "
                    + "\"state\", \"heartbeatAt\", \"heartbeatAgoMillis\", \"claimedAt\", \"layout\", \"input\", \"output\", "
                    + "\"instance\", \"claimOffset\", \"marks\", \"note\"}.")
    static final class ListClaims implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Option(names = "--format", paramLabel = "F", defaultValue = "table",
                description = "table (for a terminal) or json (one object per line) (default: ${DEFAULT-VALUE})")
        ChangelogCommand.Format format;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "60s",
                description = "give up if the registry cannot be read in this time (default: ${DEFAULT-VALUE})")
        Duration limit;

        @Override
        public Integer call() {
            SnowstampConfig loaded = options.load();
            try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit, loaded.registry().topic());
                 WorkerRegistry registry = new WorkerRegistry(KafkaSettings.client(connection.config().connection()),
                         connection.config().registry().topic(), limit, System::currentTimeMillis)) {
                RegistryLog.Snapshot snapshot = registry.log().read();
                long now = System.currentTimeMillis();
                long staleAfter = connection.config().registry().staleAfter().toMillis();
                PrintWriter out = spec.commandLine().getOut();
                List<Row> rows = rows(snapshot.view(), now, staleAfter);
                if (format == ChangelogCommand.Format.json) {
                    rows.forEach(row -> out.println(row.json(snapshot.view(), now)));
                } else {
                    out.println("worker registry " + registry.log().topic() + ": " + rows.size() + " claim" + (rows.size() == 1 ? "" : "s")
                            + ", now " + StateText.iso(now));
                    TextTable table = new TextTable("space", "dc", "application", "workers", "state", "heartbeat", "layout", "input -> output");
                    for (Row row : rows) {
                        Claim c = row.entry().claim();
                        table.add(c.space(), c.datacenter(), c.application(), c.range(), row.state(),
                                c.heartbeatAt() == 0 ? "-" : StateText.iso(c.heartbeatAt()) + " (" + StateText.ago(now, c.heartbeatAt()) + ")",
                                c.layout(), c.input() + " -> " + c.output());
                    }
                    table.print(out);
                }
                snapshot.unreadable().forEach(line -> spec.commandLine().getErr().println("warning: unreadable registry record at " + line));
                out.flush();
                return 0;
            }
        }
    }

    /** A claim and the state {@code workers list} shows. */
    record Row(RegistryView.Entry entry, String state) {
        String json(RegistryView view, long now) {
            Claim c = entry.claim();
            return JsonText.of(new Line(c.space(), c.datacenter(), c.application(), c.firstWorker(), c.count(), state,
                    StateText.isoOrNull(c.heartbeatAt()), now - c.heartbeatAt(), StateText.isoOrNull(c.claimedAt()), c.layout(),
                    c.input(), c.output(), c.instance(), view.order(entry), c.marks(), c.note()));
        }
    }

    /** One claim in {@code --format json}, in the order the command's description gives; marks keyed by worker. */
    record Line(String space, long datacenter, String application, long firstWorker, int count, String state,
                String heartbeatAt, long heartbeatAgoMillis, String claimedAt, String layout, String input, String output,
                String instance, long claimOffset, Map<Long, Long> marks, String note) {
    }

    static List<Row> rows(RegistryView view, long now, long staleAfter) {
        List<Row> rows = new ArrayList<>();
        for (RegistryView.Verdict verdict : view.verdicts()) {
            Claim c = verdict.claim();
            String state = !verdict.granted() ? "denied"
                    : WorkerRegistry.STOPPED_NOTE.equals(c.note()) ? "stopped"
                    : now - c.heartbeatAt() > staleAfter ? "stale" : "active";
            rows.add(new Row(verdict.entry(), state));
        }
        view.inactive().forEach(entry -> rows.add(new Row(entry, entry.claim().state().toString())));
        rows.sort(Comparator.comparing((Row r) -> r.entry().claim().space()).thenComparingLong(r -> r.entry().claim().datacenter())
                .thenComparingLong(r -> r.entry().claim().firstWorker()).thenComparingLong(r -> r.entry().offset()));
        return rows;
    }

    @Command(name = "release", header = "Releases an application's worker range, recording each worker's high-water mark.",
            description = "For every worker of the application's range in the ID space (id.space), computes its high-water "
                    + "mark exactly as 'recover' does: the larger of the application's worker-state changelog and the highest "
                    + "ID of the worker in its output partition (the tail, read_uncommitted). Dry run by default: prints one "
                    + "row per worker; --apply records the range as released with those marks. Whoever claims any of these "
                    + "workers later resumes above its mark, even with an empty state, a new output topic and a clock behind. "
                    + "Refuses while the application has active members (its consumer group), and when its last heartbeat is "
                    + "recent without a clean stop; a claim without heartbeat for longer than registry.stale-after (a crashed "
                    + "application) needs --force, which also accepts a missing output topic (marks from the changelog alone).")
    static final class Release implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        KafkaOptions options;

        @Option(names = "--application-id", paramLabel = "APP", required = true, description = "the application whose range to release")
        String application;

        @Option(names = "--apply", description = "record the release (without it: print the marks, write nothing)")
        boolean apply;

        @Option(names = "--force", description = "release a stale claim (no clean stop, no heartbeat for longer than registry.stale-after)")
        boolean force;

        @Option(names = "--timeout", paramLabel = "D", defaultValue = "10m",
                description = "give up if the registry, the changelog or an output tail cannot be read in this time (default: ${DEFAULT-VALUE})")
        Duration limit;

        @Override
        public Integer call() {
            SnowstampConfig loaded = options.load();
            PrintWriter out = spec.commandLine().getOut();
            try (KafkaOptions.Connection connection = options.connect(loaded, 0, limit, loaded.registry().topic());
                 WorkerRegistry registry = new WorkerRegistry(KafkaSettings.client(connection.config().connection()),
                         connection.config().registry().topic(), limit, System::currentTimeMillis)) {
                SnowstampConfig config = connection.config();
                String space = config.registry().space();
                RegistryView view = registry.readable().view();
                List<RegistryView.Verdict> segments = view.heldBy(space, application);
                if (segments.isEmpty()) {
                    throw new SnowstampException("application " + application + " holds no claim in ID space " + space
                            + " of the worker registry " + config.registry().topic() + ": see 'snowstamp workers list' (--set id.space=... for another space)");
                }
                ApplicationGroup.requireStopped(registry.log().admin(), application, limit, "releasing its worker range");
                List<Claim> claims = segments.stream().map(RegistryView.Verdict::claim).toList();
                ReleaseCheck.refusal(application, claims, System.currentTimeMillis(), config.registry().staleAfter(), force, "release it")
                        .ifPresent(refusal -> {
                            throw new SnowstampException(refusal);
                        });
                ReleaseMarks.Result result = ReleaseMarks.compute(claims, KafkaSettings.client(config.connection()), registry.log().admin(),
                        limit, force);
                IdLayout layout = IdLayout.fromFingerprint(claims.get(0).layout());
                out.println("release workers " + claims.get(0).firstWorker() + ".." + (claims.get(claims.size() - 1).endWorker() - 1) + " of "
                        + application + " in ID space " + space + ", datacenter " + claims.get(0).datacenter() + " (changelog + tail of "
                        + claims.get(0).output() + ")");
                if (!result.note().isEmpty()) {
                    out.println("note: " + result.note());
                }
                TextTable table = new TextTable("worker", "partition", "from changelog", "from output", "mark", "mark time");
                for (ResumePlan.Row row : result.plan().rows()) {
                    long mark = result.marks().get(row.worker());
                    table.add(row.worker(), row.partition(), StateText.id(row.fromChangelog()), StateText.id(row.fromOutput()),
                            StateText.id(mark), StateText.idTime(layout, mark));
                }
                table.print(out);
                if (!apply) {
                    out.println("dry run: nothing written; --apply records the release");
                } else {
                    registry.release(view, segments, result.marks(), config.connection().instanceId(),
                            "released by 'workers release'" + (force ? " --force (stale claim)" : ""));
                    out.println("released: whoever claims these workers resumes above their marks");
                }
                out.flush();
                return 0;
            }
        }
    }
}
