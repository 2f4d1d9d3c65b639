package io.snowstamp.schema;

import io.snowstamp.bench.AvroSampleValues;
import io.snowstamp.config.StampSettings.OnExistingField;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
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
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/**
 * What Avro mode does per value on the stream thread beyond its floor: the walk over the writer schema
 * ({@link Stamping#check}), beside the copy with the ID appended that the floor does too ({@link Stamping#stamp}), and
 * both in the stamper's order. {@code bench}'s own values; {@code values}: how many rotate, 64 (hot in the caches) or
 * 16,384 (megabytes: each value comes from memory or the last-level cache, as a record polled a while before it is
 * processed does).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class AvroCheckBenchmark {
    @Param({"80", "1024", "4096"})
    public int size;

    @Param({"64", "16384"})
    public int values;

    /**
     * {@code repeated}: {@code bench}'s values, whose text fields keep their lengths from value to value (the layout
     * {@link TextRunLayout} checks in one pass); {@code varied}: the same with every text field cut to a length of its
     * own in each value (the walk, and the layout tried and dropped now and then).
     */
    @Param({"repeated", "varied"})
    public String layout;

    private byte[][] frames;
    private Stamping stamping;
    private int next;
    private long id = 1_000_000_000_000_000_000L;

    @Setup
    public void setUp() {
        Schema schema = AvroSampleValues.schema(size);
        stamping = Stamping.avro(schema.toString(), 1, AvroEvolution.evolve(schema.toString(), "id", OnExistingField.REJECT), "id", 2);
        frames = new byte[values][];
        for (int i = 0; i < values; i++) {
            frames[i] = layout.equals("varied") ? varied(i, schema) : AvroSampleValues.value(i, schema, 1);
        }
    }

    /** Value {@code n} with each text field shortened by 0 to 9 bytes, differently in every value. */
    private static byte[] varied(int n, Schema schema) {
        try {
            byte[] framed = AvroSampleValues.value(n, schema, 1);
            GenericRecord record = new GenericDatumReader<GenericRecord>(schema).read(null,
                    DecoderFactory.get().binaryDecoder(framed, 5, framed.length - 5, null));
            for (int f = 0; f < schema.getFields().size(); f++) {
                if (record.get(f) instanceof CharSequence text) {
                    record.put(f, text.toString().substring(0, Math.max(1, text.length() - (int) ((n * 31L + f * 17L) % 10))));
                }
            }
            return AvroSampleValues.framed(record, 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private byte[] nextValue() {
        byte[] value = frames[next];
        next = next + 1 == frames.length ? 0 : next + 1;
        return value;
    }

    @Benchmark
    public byte[] check() {
        byte[] value = nextValue();
        stamping.check(value);
        return value;
    }

    @Benchmark
    public byte[] stamp() {
        return stamping.stamp(nextValue(), id++);
    }

    @Benchmark
    public byte[] checkAndStamp() {
        byte[] value = nextValue();
        stamping.check(value);
        return stamping.stamp(value, id++);
    }
}
