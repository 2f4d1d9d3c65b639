package io.snowstamp.json;

import com.fasterxml.jackson.core.JsonFactory;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.ToIntFunction;

/**
 * {@link JsonCheckBenchmark}'s comparison in this thread's CPU time rather than wall time: on a machine shared
 * with other builds a wall-clock benchmark measures the neighbours too. The tokenizer, the check and the UTF-8
 * pass run in turns (reversed every other round, after three rounds of warm-up), on the same values; printed
 * per shape and size: the median nanoseconds per value (lowest-highest of the rounds) and the check's median
 * ratio to the tokenizer.
 *
 * <p>{@code mvn -B -Pjmh -DskipTests test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.snowstamp.json.JsonCheckCpuTime [-Dexec.args=ROUNDS]}
 */
public final class JsonCheckCpuTime {
    /**
     * The check's goal (issue 45): at most this many times Jackson's plain tokenizer over the same bytes — the floor of
     * a validating pass on the library we chose; a hand-written parser stays out.
     */
    static final double GOAL = 1.2;

    private JsonCheckCpuTime() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        JsonFactory factory = new JsonFactory();
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 64);
        String[] names = {"tokenizer", "check", "utf8"};
        ToIntFunction<byte[]>[] passes = passes(factory, splicer);
        for (String shape : new String[] {"flat", "nested"}) {
            for (int size : new int[] {80, 1024, 4096}) {
                byte[][] values = JsonCheckBenchmark.values(shape, size);
                int perRound = 80_000_000 / (size + 100);
                double[][] nanos = new double[passes.length][rounds];
                for (int round = -3; round < rounds; round++) {
                    for (int k = 0; k < passes.length; k++) {
                        int p = (round & 1) == 0 ? k : passes.length - 1 - k;
                        long sink = 0;
                        long start = threads.getCurrentThreadCpuTime();
                        for (int i = 0; i < perRound; i++) {
                            sink += passes[p].applyAsInt(values[i & (values.length - 1)]);
                        }
                        long spent = threads.getCurrentThreadCpuTime() - start;
                        if (round >= 0) {
                            nanos[p][round] = (double) spent / perRound + (sink == 42 ? 1e-9 : 0);
                        }
                    }
                }
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-6s %5d B", shape, size));
                for (int p = 0; p < passes.length; p++) {
                    double[] sorted = nanos[p].clone();
                    Arrays.sort(sorted);
                    line.append(String.format(Locale.ROOT, "  %s %.0f ns (%.0f-%.0f)", names[p], median(sorted), sorted[0],
                            sorted[sorted.length - 1]));
                }
                double[] ratios = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ratios[r] = nanos[1][r] / nanos[0][r];
                }
                Arrays.sort(ratios);
                double ratio = median(ratios);
                line.append(String.format(Locale.ROOT, "  check/tokenizer %.2f (%.2f-%.2f), goal <= %.2f: %s", ratio, ratios[0],
                        ratios[rounds - 1], GOAL, ratio <= GOAL ? "met" : "not met"));
                System.out.println(line);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static ToIntFunction<byte[]>[] passes(JsonFactory factory, JsonIdSplicer splicer) {
        return new ToIntFunction[] {
            value -> {
                try {
                    return JsonCheckBenchmark.tokens(factory, (byte[]) value);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            },
            value -> splicer.inspect((byte[]) value).openBrace(),
            value -> Utf8.firstInvalid((byte[]) value)};
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
