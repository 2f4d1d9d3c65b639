package io.snowstamp.cli;

import io.snowstamp.bench.BusyFailover;
import io.snowstamp.bench.Footprint;
import io.snowstamp.bench.Neighbour;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.SnowstampConfig;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The runs of {@code bench --footprint-partitions}: one stamper instance's footprint, or with {@code --footprint-rate}
 * the busy failover, at each partition count, guarantee and neighbour. Apart from {@link BenchCommand} because they
 * share none of its throughput runs' steps: they start stamper processes of their own and print figures of their own.
 *
 * @param spec           the bench command's, for usage errors
 * @param partitions     {@code --footprint-partitions}
 * @param rate           {@code --footprint-rate}: records per partition per second, 0 for the footprint
 * @param floor          {@code --footprint-floor}: the pass-through before each stamper run of the busy failover
 * @param javaOptions    {@code --footprint-java-options}
 * @param settings       {@code --footprint-set}: settings of the measured stamper processes
 * @param neighbourCores {@code --neighbour-cores}
 * @param format         {@code --format}
 */
record FootprintRuns(CommandSpec spec, List<Integer> partitions, double rate, boolean floor, String javaOptions,
                     java.util.Map<String, String> settings, List<Integer> neighbourCores, ChangelogCommand.Format format) {

    /**
     * Runs {@code run} with {@code cores} busy loops beside it ({@link Neighbour}), stopping them when it ends, however it
     * ends.
     */
    static <T> T beside(int cores, Callable<T> run) throws Exception {
        try (Neighbour neighbour = Neighbour.start(cores)) {
            return run.call();
        }
    }

    /**
     * Measures every partition count under each guarantee ({@code chosen}, or null: the settings' own) and neighbour,
     * printing each run's figures to {@code progress} as it ends and the document to {@code out}.
     *
     * @return the exit code
     */
    int run(SnowstampConfig config, List<ConnectionSettings.Guarantee> chosen, PrintWriter out, PrintWriter progress)
            throws Exception {
        if (partitions.stream().anyMatch(n -> n < 1)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--footprint-partitions must be >= 1 each");
        }
        List<ConnectionSettings.Guarantee> guarantees = chosen != null ? chosen : List.of(config.connection().processingGuarantee());
        Path work = Files.createTempDirectory("snowstamp-footprint");
        List<Footprint> footprints = guarantees.stream().map(g -> new Footprint(config.connection(), work,
                List.of(javaOptions.trim().split("\\s+")), Main.class.getName(), java.time.Duration.ofMinutes(10), g, settings))
                .toList();
        if (rate != 0) {
            return busyFailover(footprints, config, out, progress);
        }
        List<Footprint.Figures> rows = new ArrayList<>();
        for (int n : partitions) {
            for (Footprint footprint : footprints) {
                for (int cores : neighbourCores) {
                    progress.println("measuring one stamper instance on " + n + " partitions at "
                            + config.connection().kafka().get("bootstrap.servers") + " (" + footprint.guarantee() + ", neighbour "
                            + cores + " cores)");
                    progress.flush();
                    Footprint.Figures figures = beside(cores, () -> footprint.measure(n, cores));
                    rows.add(figures);
                    // each run as it is measured: a later one that fails or runs out of time does not take these figures along
                    progress.println("  " + Footprint.line(figures));
                    progress.flush();
                }
            }
        }
        if (format == ChangelogCommand.Format.table) {
            Footprint.printTable(rows, out);
        }
        out.println(Footprint.json(rows));
        return 0;
    }

    private int busyFailover(List<Footprint> footprints, SnowstampConfig config, PrintWriter out, PrintWriter progress)
            throws Exception {
        if (!(rate > 0 && rate <= 1000)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--footprint-rate " + rate
                    + ": records per partition per second, above 0 and at most 1000");
        }
        List<BusyFailover.Figures> rows = new ArrayList<>();
        for (int n : partitions) {
            for (Footprint footprint : footprints) {
                BusyFailover busy = new BusyFailover(footprint, config.connection(), java.time.Duration.ofMinutes(5));
                for (int cores : neighbourCores) {
                    // the pass-through first, then the stamper, under the same guarantee and beside the same neighbour
                    for (BusyFailover.Subject subject : floor
                            ? List.of(BusyFailover.Subject.PASS_THROUGH, BusyFailover.Subject.STAMPER) : List.of(BusyFailover.Subject.STAMPER)) {
                        progress.println("busy failover of the " + (subject == BusyFailover.Subject.STAMPER ? "stamper" : "pass-through")
                                + " on " + n + " partitions at " + config.connection().kafka().get("bootstrap.servers") + " ("
                                + footprint.guarantee() + ", neighbour " + cores + " cores)");
                        progress.flush();
                        BusyFailover.Figures figures = beside(cores, () -> busy.measure(subject, n, rate, cores));
                        rows.add(figures);
                        progress.println("  " + BusyFailover.line(figures));
                        progress.flush();
                    }
                }
            }
        }
        out.println(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(Map.of("busyFailover", rows)));
        return 0;
    }
}
