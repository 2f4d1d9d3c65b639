package io.snowstamp.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A noisy neighbour for the load bench: {@code cores} busy loops, each a shell of its own
 * ({@code sh -c 'while :; do :; done'}: the loop is the shell's own builtins, so the shell is the only
 * process to stop), started before a measured run and stopped after it. Separate processes, not threads
 * of this JVM, so that the figures of this process (and of the measured children) do not include them,
 * as a neighbour's would not. Stopped on {@link #close()} and, should this JVM end first (Ctrl-C), by
 * a shutdown hook: a bench that fails or is interrupted leaves no loop spinning.
 */
public final class Neighbour implements AutoCloseable {
    private final List<Process> loops = new ArrayList<>();
    private final Thread hook = new Thread(this::stopAll, "neighbour-stop");
    private boolean hooked;

    private Neighbour() {
    }

    /** Starts {@code cores} busy loops (none for 0: the run without a neighbour). */
    public static Neighbour start(int cores) throws IOException {
        if (cores < 0) {
            throw new IllegalArgumentException("cores " + cores + ": 0 or more");
        }
        Neighbour neighbour = new Neighbour();
        if (cores == 0) {
            return neighbour;
        }
        Runtime.getRuntime().addShutdownHook(neighbour.hook);
        neighbour.hooked = true;
        try {
            for (int i = 0; i < cores; i++) {
                neighbour.loops.add(new ProcessBuilder("sh", "-c", "while :; do :; done")
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start());
            }
        } catch (IOException | RuntimeException e) {
            neighbour.close();    // the loops already started do not outlive a failed start
            throw e;
        }
        return neighbour;
    }

    /** The busy loops' processes (their pids, for a check that they are gone). */
    public List<ProcessHandle> processes() {
        return loops.stream().map(Process::toHandle).toList();
    }

    /** The number of busy loops. */
    public int cores() {
        return loops.size();
    }

    /** The system's load average over the last minute, or -1 where the system does not tell it. */
    public static double loadAverage() {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return load < 0 ? -1 : Math.round(load * 100) / 100.0;
    }

    /** Stops every loop (SIGKILL: a busy loop has nothing to clean up) and waits until each is gone. */
    @Override
    public void close() {
        stopAll();
        if (hooked) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down already: the hook runs (or ran) stopAll itself
            }
            hooked = false;
        }
    }

    private void stopAll() {
        for (Process loop : loops) {
            loop.destroyForcibly();
        }
        for (Process loop : loops) {
            try {
                loop.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
