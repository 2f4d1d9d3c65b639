package io.snowstamp.id;

import java.util.concurrent.locks.LockSupport;

/**
 * The wall clock in Unix milliseconds, cached: one daemon thread, {@value #THREAD_NAME}, copies
 * {@link System#currentTimeMillis()} into a volatile field about every millisecond, so {@link #millis()}
 * is one volatile read instead of a call into the operating system's clock. That call was most of the
 * cost of {@link IdGenerator#next()}; {@code CachedClock::millis} is the stamper's production clock.
 *
 * <p><b>Accuracy.</b> A read lags {@code System.currentTimeMillis()} by up to one tick: about 1 ms,
 * longer only while an overloaded machine leaves the ticker thread unscheduled. It follows that clock
 * as it is, steps backwards included (so clock-rollback detection still sees them). For an
 * {@link IdGenerator} a lagging clock only makes timestamps slightly older: uniqueness and order never
 * depend on the clock.
 *
 * <p>One ticker per JVM, started by the first read and running until the JVM exits; being a daemon,
 * it never keeps the JVM alive. Thread-safe.
 */
public final class CachedClock {
    /** The name of the ticker thread. */
    public static final String THREAD_NAME = "snowstamp-clock";
    private static final long TICK_NANOS = 1_000_000;

    private final Thread ticker;
    private volatile long millis = System.currentTimeMillis();

    private CachedClock() {
        ticker = new Thread(this::tick, THREAD_NAME);
        ticker.setDaemon(true);
        ticker.start();
    }

    /** The wall clock in Unix milliseconds, at most about a millisecond old; starts the ticker on the first call. */
    public static long millis() {
        return Shared.CLOCK.millis;
    }

    /** The ticker thread (for tests); starts it like {@link #millis()}. */
    static Thread ticker() {
        return Shared.CLOCK.ticker;
    }

    private void tick() {
        while (true) {
            LockSupport.parkNanos(this, TICK_NANOS);
            // A frozen clock would silently age every timestamp: an interrupt does not stop the ticker.
            Thread.interrupted();
            millis = System.currentTimeMillis();
        }
    }

    /** Holder idiom: the ticker starts when the class is first used, once, without a lock on the read path. */
    private static final class Shared {
        static final CachedClock CLOCK = new CachedClock();
    }
}
