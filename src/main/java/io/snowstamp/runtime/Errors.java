package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import org.apache.kafka.streams.errors.StreamsException;

/** Turns an exception chain into the one line a person needs. */
public final class Errors {
    private Errors() {
    }

    /**
     * The message of the innermost snowstamp exception in the chain if there is one (it was written
     * for people), else the deepest message with its exception type.
     */
    public static String oneLine(Throwable error) {
        Throwable deepest = error;
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof SnowstampException) {
                return flatten(t.getMessage());
            }
            if (t.getMessage() != null && !(t instanceof StreamsException && t.getCause() != null)) {
                deepest = t;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        String message = deepest.getMessage() == null ? "" : ": " + deepest.getMessage();
        return flatten(deepest.getClass().getSimpleName() + message);
    }

    private static String flatten(String text) {
        return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
