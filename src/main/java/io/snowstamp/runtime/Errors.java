package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import org.apache.kafka.streams.errors.StreamsException;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

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
        Throwable innermostOwn = null;
        // the whole chain is walked, and initCause can make it circular: stop at the first repeat
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof SnowstampException) {
                innermostOwn = t;
            }
            if (t.getMessage() != null && !(t instanceof StreamsException && t.getCause() != null)) {
                deepest = t;
            }
        }
        if (innermostOwn != null) {
            return flatten(innermostOwn.getMessage());
        }
        String message = deepest.getMessage() == null ? "" : ": " + deepest.getMessage();
        return flatten(deepest.getClass().getSimpleName() + message);
    }

    private static String flatten(String text) {
        return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
