package io.snowstamp.testing;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One run of the real {@code verify} command (in-process, read_committed) over a stamped topic and
 * its source, with the summary line parsed.
 *
 * <p>The summary line does not count IDs that fail to increase within a partition; verify lists
 * them as problems ({@code decrease in partition ...}, a few examples) and exits 1.
 * {@link #decreases()} returns those lines.
 */
public record Verification(Cli.Result result, long records, long duplicates, long missing, long extra) {
    private static final Pattern SUMMARY =
            Pattern.compile("records=(\\d+) duplicates=(\\d+) missing=(\\d+) extra=(\\d+)");

    /** Runs {@code verify --topic output --source source}. */
    public static Verification run(String bootstrapServers, String output, String source) {
        Cli.Result result = Cli.run("verify", "--bootstrap-servers", bootstrapServers,
                "--topic", output, "--source", source, "--timeout", "5m");
        return parse(result);
    }

    /** Parses the last line of a verify run; fails with both streams if it is not a summary line. */
    public static Verification parse(Cli.Result result) {
        Matcher m = SUMMARY.matcher(result.lastLine());
        if (!m.matches()) {
            throw new AssertionError("verify printed no summary line\n" + result);
        }
        return new Verification(result, Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
                Long.parseLong(m.group(3)), Long.parseLong(m.group(4)));
    }

    /** {@code records=N duplicates=0 missing=0 extra=0}: what a clean run over N source records prints. */
    public static String clean(long records) {
        return "records=" + records + " duplicates=0 missing=0 extra=0";
    }

    public String summaryLine() {
        return result.lastLine();
    }

    public int exitCode() {
        return result.exitCode();
    }

    /** The {@code decrease in partition P at offset O: ID after ID} examples verify listed. */
    public List<String> decreases() {
        return Arrays.stream(result.outLines()).filter(line -> line.startsWith("decrease")).toList();
    }

    /**
     * Runs verify every ~2 s until {@code done} holds or {@code timeout} passes, and returns the
     * last run either way (the caller's assertions then show what was still wrong). Waiting is
     * needed after a SIGKILL under exactly-once: the dead producer's open transaction hides every
     * later record from read_committed readers until the broker aborts it.
     */
    public static Verification await(String bootstrapServers, String output, String source,
                                     Predicate<Verification> done, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Verification v = run(bootstrapServers, output, source);
            if (done.test(v) || System.nanoTime() > deadline) {
                return v;
            }
            TimeUnit.SECONDS.sleep(2);
        }
    }

    /** Waits until every one of {@code produced} source records is stamped and nothing more is pending: missing=0, records &gt;= produced. */
    public static Verification awaitAllStamped(String bootstrapServers, String output, String source,
                                               long produced, Duration timeout) throws InterruptedException {
        return await(bootstrapServers, output, source, v -> v.missing() == 0 && v.records() >= produced, timeout);
    }

    /**
     * Waits until every one of {@code produced} source records is stamped and the output stopped growing between two
     * runs: under at-least-once, inputs may still be stamped again after the last one first was.
     */
    public static Verification awaitSettled(String bootstrapServers, String output, String source,
                                            long produced, Duration timeout) throws InterruptedException {
        AtomicLong previous = new AtomicLong(-1);
        return await(bootstrapServers, output, source,
                v -> v.missing() == 0 && v.records() >= produced && v.records() == previous.getAndSet(v.records()), timeout);
    }

    /**
     * {@link #awaitAllStamped} over a stamper's topics within 90 s, failing (with the last run) if the
     * output holds fewer than {@code records} records by then.
     */
    public static Verification awaitStamped(String bootstrapServers, Stamper.Topics topics, long records) throws InterruptedException {
        Verification verify = awaitAllStamped(bootstrapServers, topics.out(), topics.in(), records, Duration.ofSeconds(90));
        if (verify.records() < records) {
            throw new AssertionError("records stamped within 90 s: " + verify.records() + ", not " + records + "\n" + verify);
        }
        return verify;
    }

    @Override
    public String toString() {
        return result.toString();
    }
}
