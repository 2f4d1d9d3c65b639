package io.snowstamp.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.snowstamp.bench.SampleValues;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * What JSON mode's check costs per value ({@link JsonIdSplicer#inspect}) beside Jackson's plain tokenizer over
 * the same bytes ({@link #tokens}: {@code nextToken()} to the end, nothing else), the floor for any validating
 * pass built on Jackson. The values are {@code bench}'s own ({@code flat}: its padded order events, a member every
 * ~20 bytes at the top level) and the same sizes with the padding in an array of small objects ({@code nested}).
 * A rotating set of values (as a topic has), not one value the branch predictor learns by heart.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class JsonCheckBenchmark {
    private static final int VALUES = 64;

    @Param({"80", "1024", "4096"})
    public int size;

    @Param({"flat", "nested"})
    public String shape;

    private final JsonFactory factory = new JsonFactory();
    private final JsonFactory noCanon = JsonFactory.builder().disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES).build();
    private final JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 64);
    private byte[][] values;
    private int next;

    @Setup
    public void setUp() {
        values = values(shape, size);
    }

    /** The values of a shape and size, each one that passes the check. */
    static byte[][] values(String shape, int size) {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 64);
        byte[][] values = new byte[VALUES][];
        for (int n = 0; n < VALUES; n++) {
            values[n] = shape.equals("flat") ? SampleValues.value(n, size) : nested(n, size);
            splicer.inspect(values[n]);
        }
        return values;
    }

    private byte[] value() {
        byte[] value = values[next];
        next = (next + 1) & (VALUES - 1);
        return value;
    }

    /** The floor: Jackson's tokenizer over the value, every token read, nothing asked of it. */
    @Benchmark
    public int tokens() throws IOException {
        return tokens(factory, value());
    }

    /** The same without canonical name strings: each name decoded into a new {@code String}. */
    @Benchmark
    public int tokensNoCanon() throws IOException {
        return tokens(noCanon, value());
    }

    static int tokens(JsonFactory factory, byte[] value) throws IOException {
        int tokens = 0;
        try (JsonParser parser = factory.createParser(value)) {
            while (parser.nextToken() != null) {
                tokens++;
            }
        }
        return tokens;
    }

    /** The UTF-8 rules the tokenizer leaves out, alone. */
    @Benchmark
    public int utf8() {
        return Utf8.firstInvalid(value());
    }

    /** JSON mode's check: validation and where the ID goes. */
    @Benchmark
    public JsonIdSplicer.Plan inspect() {
        return splicer.inspect(value());
    }

    /**
     * The sample event with its padding as an array of small objects ({@code "lines":[{"sku":...,"qty":...,
     * "note":...},...]}) of about the same size: names and values below the top level.
     */
    static byte[] nested(long n, int bytes) {
        byte[] sample = SampleValues.sample(n);
        String head = new String(sample, 0, sample.length - 1, StandardCharsets.UTF_8);
        if (bytes <= sample.length) {
            return (head + ",\"lines\":[{\"sku\":\"a1\",\"qty\":1}]}").getBytes(StandardCharsets.UTF_8);
        }
        StringBuilder out = new StringBuilder(head).append(",\"lines\":[");
        byte[] flat = SampleValues.value(n, bytes);
        String words = new String(flat, StandardCharsets.UTF_8).replaceAll("[^a-z ]", " ");
        int line = 0;
        while (out.length() + 80 < bytes) {
            int from = (line * 17) % Math.max(1, words.length() - 30);
            out.append(line == 0 ? "" : ",").append("{\"sku\":\"s").append(line).append("\",\"qty\":").append(line % 7 + 1)
                    .append(",\"price\":").append(line % 90 + 0.5).append(",\"note\":\"")
                    .append(words, from, from + 20).append("\"}");
            line++;
        }
        return out.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }
}
