package io.snowstamp.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * libfaketime (Debian package {@code faketime}) for child JVMs whose wall clock must be off.
 *
 * <p>{@code faketime -f -1h java ...} shifts every clock the child reads, the wall clock
 * ({@code System.currentTimeMillis}, {@code Instant.now}) and the monotonic one alike, by the same
 * offset, which the JVM copes with. Leaving the monotonic clock alone
 * ({@code FAKETIME_DONT_FAKE_MONOTONIC=1}) does not work with HotSpot: its internal threads' timed
 * waits then return at once and spin (a sleeping JVM burns half a core). The {@code faketime}
 * binary forks the program instead of exec'ing it; {@link ChildJvm} signals the forked JVM.
 */
public final class Faketime {
    /** Extra environment for a child under faketime: none (see above). */
    public static final Map<String, String> ENV = Map.of();

    private static final String INSTALL = "faketime is not installed: apt-get install faketime";

    private Faketime() {
    }

    /** Whether the {@code faketime} binary is on the PATH. */
    public static boolean available() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "faketime"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Skips the calling test when faketime is missing; fails it under CI, which installs it ({@code .ci/run}): the tests
     * that need it are the proofs for a clock behind (design.md), and a skipped proof must not pass the build.
     */
    public static void assumeAvailable() {
        if (!available() && System.getenv("CI") != null) {
            throw new AssertionError(INSTALL + " (.ci/run installs it)");
        }
        Assumptions.assumeTrue(available(), INSTALL);
    }

    /**
     * The command prefix that runs a program with its wall clock moved by {@code offset}
     * (libfaketime's relative syntax: {@code -1h}, {@code -10m}, {@code +30s}).
     */
    public static List<String> prefix(String offset) {
        return List.of("faketime", "-f", offset);
    }
}
