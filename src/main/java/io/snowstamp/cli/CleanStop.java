package io.snowstamp.cli;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

import java.util.List;

/**
 * SIGTERM and Ctrl-C (SIGINT) are the normal way to stop {@code run} and {@code broker}, so they
 * end with exit status 0, as documented, instead of the JVM's 128 + signal (143, 130). The stop
 * itself stays in the commands' shutdown hooks: {@code System.exit} runs them, exactly as the JVM's
 * own handler would.
 */
final class CleanStop {
    private static final Logger log = LoggerFactory.getLogger(CleanStop.class);

    private CleanStop() {
    }

    /** From now on, SIGTERM and SIGINT exit this JVM with status 0 after its shutdown hooks. */
    static void exitZeroOnSignal() {
        for (String name : List.of("TERM", "INT")) {
            try {
                Signal.handle(new Signal(name), signal -> System.exit(0));
            } catch (IllegalArgumentException e) {
                // the signal is reserved here (e.g. -Xrs): the JVM's default handling, and its 128 + signal status, stay
                log.debug("cannot handle SIG{}: {}", name, e.getMessage());
            }
        }
    }
}
