package io.snowstamp.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** No timing assertions: bounds are generous, and waits only end early when the ticker does its job. */
class CachedClockTest {

    /** How long the ticker may take to move on: far beyond a millisecond, so only a stopped ticker fails. */
    private static final long PATIENCE_MILLIS = 30_000;

    @Test
    void shouldNeverReadAheadOfTheSystemClockNorFarBehindIt() {
        for (int i = 0; i < 1_000; i++) {
            long before = System.currentTimeMillis();
            long cached = CachedClock.millis();
            long after = System.currentTimeMillis();
            // a copy of an earlier System.currentTimeMillis(): never ahead of it
            assertThat(cached).isLessThanOrEqualTo(after);
            assertThat(cached).as("a stopped or wrong ticker, not a late one").isGreaterThan(before - PATIENCE_MILLIS);
        }
    }

    @Test
    void shouldMoveOnAndNeverGoBackwards() {
        long first = CachedClock.millis();
        long previous = first;
        int changes = 0;
        long deadline = System.currentTimeMillis() + PATIENCE_MILLIS;
        while (changes < 20) {
            long now = CachedClock.millis();
            if (now < previous) {
                fail("the cached clock went back from " + previous + " to " + now);
            }
            if (now > previous) {
                changes++;
            }
            previous = now;
            if (System.currentTimeMillis() > deadline) {
                fail("the cached clock changed only " + changes + " times in " + PATIENCE_MILLIS + " ms");
            }
        }
        assertThat(previous).isGreaterThanOrEqualTo(first + 20);
    }

    @Test
    void shouldShareOneDaemonTickerPerJvm() throws Exception {
        int readers = 8;
        CountDownLatch start = new CountDownLatch(1);
        Set<Thread> seen = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            Thread reader = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                CachedClock.millis();
                seen.add(CachedClock.ticker());
            });
            reader.start();
            threads.add(reader);
        }
        start.countDown();
        for (Thread reader : threads) {
            reader.join();
        }

        Thread ticker = CachedClock.ticker();
        assertThat(seen).containsExactly(ticker);
        assertThat(ticker.isDaemon()).isTrue();
        assertThat(ticker.isAlive()).isTrue();
        assertThat(ticker.getName()).isEqualTo(CachedClock.THREAD_NAME);
        assertThat(Thread.getAllStackTraces().keySet())
                .filteredOn(thread -> thread.getName().equals(CachedClock.THREAD_NAME))
                .containsExactly(ticker);
    }

    @Test
    void shouldKeepTickingAfterAnInterrupt() throws Exception {
        Thread ticker = CachedClock.ticker();
        ticker.interrupt();
        long before = CachedClock.millis();
        long deadline = System.currentTimeMillis() + PATIENCE_MILLIS;
        // moving on, and with the interrupt cleared: a flag left set would make it spin instead of park
        while (CachedClock.millis() <= before + 5 || ticker.isInterrupted()) {
            if (System.currentTimeMillis() > deadline) {
                fail("after an interrupt, the ticker " + (ticker.isInterrupted() ? "kept the flag" : "stopped"));
            }
            Thread.sleep(1);
        }
        assertThat(ticker.isAlive()).isTrue();
    }

    @Test
    void shouldDriveAGenerator() {
        IdGenerator generator = new IdGenerator(IdLayout.preset("snowflake"), 0, 1, CachedClock::millis);
        long before = System.currentTimeMillis();
        long id = generator.next();
        long after = System.currentTimeMillis();
        long wallMillis = generator.layout().decode(id).wallMillis();
        assertThat(wallMillis).isLessThanOrEqualTo(after).isGreaterThan(before - PATIENCE_MILLIS);
    }
}
