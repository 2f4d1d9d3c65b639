package io.snowstamp.lease;

import org.apache.kafka.streams.processor.TaskId;
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

import java.util.concurrent.TimeUnit;

/**
 * What the lease check costs per ID, beside what the freeze guard it replaced cost (one
 * {@link System#nanoTime()} and two volatile reads, rebuilt here as {@link #freezeGuardWork}) and a
 * bare {@code nanoTime()}. The lease is kept confirmed by this benchmark's own setup (a confirmation
 * sent far in the future), so every check takes the path a healthy task takes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class LeaseBenchmark {
    private LeaseGuard guard;
    private volatile long lastTick;
    private volatile long freezes;
    private long seenFreezes;

    @Setup
    public void setUp() {
        LeaseMark mine = new LeaseMark(1, "bench/t1");
        PartitionLease lease = new PartitionLease(0, mine, 0, Long.MAX_VALUE / 4, Long.MAX_VALUE / 4);
        lease.observe(0, mine);
        long now = System.nanoTime();
        lease.confirmed(now - Long.MAX_VALUE / 4, now - Long.MAX_VALUE / 4, 1);
        lease.confirmed(now, now, 1);
        guard = new LeaseGuard(lease, new TaskId(0, 0), "bench", () -> { });
        guard.check();      // the first ID's check, which logs
        lastTick = now;
    }

    @Benchmark
    public boolean leaseCheck() {
        return guard.check();
    }

    @Benchmark
    public long freezeGuardWork() {
        long now = System.nanoTime();
        long tick = lastTick;
        long count = freezes;
        return now - tick >= 3_000_000_000L || count != seenFreezes ? 1 : 0;
    }

    @Benchmark
    public long nanoTime() {
        return System.nanoTime();
    }
}
