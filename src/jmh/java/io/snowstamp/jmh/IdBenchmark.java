package io.snowstamp.jmh;

import cn.hutool.core.lang.Snowflake;
import com.github.f4b6a3.tsid.TsidCreator;
import com.github.f4b6a3.tsid.TsidFactory;
import io.snowstamp.id.CachedClock;
import io.snowstamp.id.IdGenerator;
import io.snowstamp.id.IdLayout;
import me.ahoo.cosid.snowflake.MillisecondSnowflakeId;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Single-thread cost of one ID, snowstamp's generator against other Java ID generators, all with a
 * 10-bit node and a 12-bit sequence (4096 IDs per millisecond) where they have one.
 *
 * <p>Every contender is called back to back, far above 4096 IDs per millisecond, so each one shows
 * what it does when a millisecond's sequence is used up: snowstamp's {@link IdGenerator} and
 * tsid-creator borrow the next millisecond (their IDs run ahead of the wall clock); Hutool and CosId
 * spin until the wall clock reaches the next millisecond, which caps them at 4.096 million IDs/s.
 * Each benchmark returns its ID, so JMH's blackhole keeps the work from being optimised away.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(3)
@State(Scope.Thread)
public class IdBenchmark {
    private static final int WORKER = 1;

    private IdGenerator snowstamp;
    private IdGenerator snowstampSystemClock;
    private TsidFactory tsidFactory;
    private TsidFactory tsidFactoryCachedClock;
    private Snowflake hutool;
    private MillisecondSnowflakeId cosid;

    @Setup
    public void setUp() {
        IdLayout layout = IdLayout.preset("snowflake");
        // as the stamper builds it: the default layout, the production clock (see RunCommand)
        snowstamp = new IdGenerator(layout, 0, WORKER, CachedClock::millis);
        snowstampSystemClock = new IdGenerator(layout, 0, WORKER, System::currentTimeMillis);
        // what an application that knows its node builds; new TsidFactory(1) is the same factory
        tsidFactory = TsidFactory.newInstance1024(WORKER);
        tsidFactoryCachedClock = TsidFactory.builder().withNodeBits(10).withNode(WORKER)
                .withTimeFunction(CachedClock::millis).build();
        hutool = new Snowflake(WORKER, 0);
        cosid = new MillisecondSnowflakeId(WORKER);
    }

    /** snowstamp's generator as the stamper runs it: reading the {@link CachedClock} on every ID. */
    @Benchmark
    public long snowstamp() {
        return snowstamp.next();
    }

    /** snowstamp's generator reading {@code System.currentTimeMillis()} on every ID. */
    @Benchmark
    public long snowstampSystemClock() {
        return snowstampSystemClock.next();
    }

    /** tsid-creator 5: {@code TsidFactory.newInstance1024(node)}, 10 node bits, 12 counter bits. */
    @Benchmark
    public long tsidFactory() {
        return tsidFactory.create().toLong();
    }

    /**
     * tsid-creator 5 given snowstamp's clock ({@code Builder.withTimeFunction}): shows how much of the
     * difference is the clock and how much the rest (tsid-creator locks, allocates a {@code Tsid}).
     */
    @Benchmark
    public long tsidFactoryCachedClock() {
        return tsidFactoryCachedClock.create().toLong();
    }

    /** tsid-creator 5: the static default factory (10 node bits, node from a property or random). */
    @Benchmark
    public long tsidCreatorGetTsid() {
        return TsidCreator.getTsid().toLong();
    }

    /** Hutool 5: {@code new Snowflake(worker, datacenter)}, which reads {@code System.currentTimeMillis()}. */
    @Benchmark
    public long hutoolSnowflake() {
        return hutool.nextId();
    }

    /** CosId 2: {@code new MillisecondSnowflakeId(machineId)}, 41/10/12 bits. */
    @Benchmark
    public long cosidMillisecondSnowflakeId() {
        return cosid.generate();
    }

    /** A random (version 4) UUID from {@code SecureRandom}: 122 random bits, no order. */
    @Benchmark
    public UUID uuidRandom() {
        return UUID.randomUUID();
    }
}
