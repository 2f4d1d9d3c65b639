package io.snowstamp.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.atomic.AtomicLong;

/** Samples the heap in use of this JVM every 50 ms, for one run's peak. */
final class HeapSampler implements AutoCloseable {
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final AtomicLong peak = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    HeapSampler() {
        thread = new Thread(() -> {
            while (running) {
                peak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "bench-heap-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    long peakMiB() {
        return peak.get() / (1024 * 1024);
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
