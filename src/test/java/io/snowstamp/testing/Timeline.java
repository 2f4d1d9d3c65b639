package io.snowstamp.testing;

import java.util.Locale;

/** Prints what a long test is doing, with seconds since it started, to its output (the failsafe report). */
public final class Timeline {
    private final long start = System.nanoTime();
    private final String name;

    public Timeline(String name) {
        this.name = name;
    }

    public void mark(String what, Object... args) {
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println(String.format(Locale.ROOT, "[%s +%6.1fs] ", name, seconds) + String.format(Locale.ROOT, what, args));
        System.out.flush();
    }
}
