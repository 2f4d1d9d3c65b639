package io.snowstamp.runtime;

import io.snowstamp.SnowstampException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.streams.errors.StreamsException;

import java.net.BindException;
import java.net.UnknownHostException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Turns an exception chain into the one line a person needs. The line never names a Java class:
 * people read it on a console or in {@code /health}; the class and stack trace belong in the log
 * ({@code --verbose}, or the log level DEBUG).
 */
public final class Errors {
    /** What a person sees for an error that carries no message at all (a bug, not a situation). */
    public static final String UNEXPECTED = "unexpected internal error (rerun with --verbose, or SNOWSTAMP_LOG_LEVEL=DEBUG, for the stack trace)";

    private Errors() {
    }

    /**
     * The message of the innermost snowstamp exception in the chain if there is one (it was written
     * for people), else the deepest message in the chain, phrased for the few JDK exceptions whose
     * message alone says too little (a file error's message is just the path).
     */
    public static String oneLine(Throwable error) {
        Throwable deepest = null;
        Throwable innermostOwn = null;
        // the whole chain is walked, and initCause can make it circular: stop at the first repeat
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof SnowstampException) {
                innermostOwn = t;
            }
            if (t.getMessage() != null && !t.getMessage().isBlank() && !(t instanceof StreamsException && t.getCause() != null)) {
                deepest = t;
            }
        }
        if (innermostOwn != null) {
            return flatten(innermostOwn.getMessage());
        }
        return deepest == null ? UNEXPECTED : flatten(phrase(deepest));
    }

    /**
     * Whether the chain holds one of snowstamp's own exceptions (also those of the pure {@code id}
     * package, such as an exhausted ID space): its message explains the error, a stack trace adds
     * nothing for people.
     */
    public static boolean explained(Throwable error) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof SnowstampException || t.getClass().getPackageName().startsWith("io.snowstamp.")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The error, or — when the broker refused the transactional ids of Kafka Streams' exactly-once producers, whose
     * message names none — one that names the prefix the ACL must allow for {@code applicationId}.
     */
    public static Throwable namingTransactionalIds(Throwable error, String applicationId) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof TransactionalIdAuthorizationException) {
                return new SnowstampException("transactional id authorization failed: exactly-once needs WRITE on the transactional"
                        + " ids with the prefix " + applicationId + "- (prefixed ACL; DESCRIBE comes with WRITE)", error);
            }
        }
        return error;
    }

    private static String phrase(Throwable t) {
        if (t instanceof FileSystemException file) {
            String reason = file.getReason() != null ? file.getReason()
                    : t instanceof NoSuchFileException ? "no such file or directory"
                    : t instanceof AccessDeniedException ? "permission denied"
                    : t instanceof NotDirectoryException ? "not a directory" : "cannot access it";
            return file.getFile() + ": " + reason + (file.getOtherFile() == null ? "" : " (" + file.getOtherFile() + ")");
        }
        if (t instanceof CharacterCodingException) {
            return "the input is not UTF-8 text";
        }
        if (t instanceof UnknownHostException) {
            return "unknown host " + t.getMessage();
        }
        if (t instanceof BindException) {
            return "cannot listen: " + t.getMessage();
        }
        return t.getMessage();
    }

    private static String flatten(String text) {
        return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
