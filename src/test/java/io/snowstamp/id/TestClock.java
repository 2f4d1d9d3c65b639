package io.snowstamp.id;

import java.util.function.LongSupplier;

/** A hand-driven wall clock that also counts how often it is read (a waiting generator would re-read it). */
final class TestClock implements LongSupplier {

    private long millis;
    private long reads;

    TestClock(long millis) {
        this.millis = millis;
    }

    @Override
    public long getAsLong() {
        reads++;
        return millis;
    }

    long millis() {
        return millis;
    }

    TestClock set(long millis) {
        this.millis = millis;
        return this;
    }

    TestClock advance(long deltaMillis) {
        this.millis += deltaMillis;
        return this;
    }

    long reads() {
        return reads;
    }
}
