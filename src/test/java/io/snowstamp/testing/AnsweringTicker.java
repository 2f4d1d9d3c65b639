package io.snowstamp.testing;

import io.snowstamp.lease.Ticker;

import java.util.ArrayList;
import java.util.List;

/** A clock that moves only when parked; the broker's answers queued with {@link #answer} run when it reaches their time. */
public final class AnsweringTicker implements Ticker {
    private long now;
    private final List<Answer> pending = new ArrayList<>();

    private record Answer(long at, Runnable run) {
    }

    /** A clock at 0. */
    public AnsweringTicker() {
        this(0);
    }

    /** A clock at {@code start} (e.g. {@link System#nanoTime()}, beside parts that read the real clock once). */
    public AnsweringTicker(long start) {
        now = start;
    }

    /** Runs {@code answer} once the clock reaches {@code afterNanos} from now. */
    public void answer(long afterNanos, Runnable answer) {
        pending.add(new Answer(now + afterNanos, answer));
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void park(long nanos) {
        now += nanos;
        pending.removeIf(answer -> {
            if (answer.at() <= now) {
                answer.run().run();
                return true;
            }
            return false;
        });
    }
}
