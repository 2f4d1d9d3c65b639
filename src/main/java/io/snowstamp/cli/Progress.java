package io.snowstamp.cli;

import java.io.PrintWriter;

/**
 * A one-line progress counter on stderr, drawn only when stderr is a terminal (never in pipes,
 * logs or tests), at most every 250 ms.
 */
final class Progress {
    private final PrintWriter err;
    private final String label;
    private final long total;
    private final boolean enabled;
    private long lastDraw;

    Progress(PrintWriter err, String label, long total) {
        this.err = err;
        this.label = label;
        this.total = total;
        this.enabled = System.console() != null;
    }

    void update(long done) {
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastDraw < 250_000_000L) {
            return;
        }
        lastDraw = now;
        err.print("\r" + label + " " + done + (total > 0 ? "/" + total : "") + "   ");
        err.flush();
    }

    void done() {
        if (enabled && lastDraw != 0) {
            err.print("\r" + " ".repeat(label.length() + 40) + "\r");
            err.flush();
        }
    }
}
