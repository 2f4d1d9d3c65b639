package io.snowstamp.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Logback's logger for a class, for a test that attaches an appender. While another thread of the JVM is still
 * initialising SLF4J (a test running beside it, the first to log), {@link LoggerFactory#getLogger} hands out a
 * substitute that is no Logback logger: wait the initialisation out instead of failing on a cast.
 */
public final class Logback {
    private Logback() {
    }

    public static Logger logger(Class<?> type) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        while (!(factory instanceof LoggerContext) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            factory = LoggerFactory.getILoggerFactory();
        }
        return ((LoggerContext) factory).getLogger(type);
    }

    /** What a test does while its lines are captured. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /** The events {@code type}'s logger logged while {@code body} ran (a ListAppender attached for that time). */
    public static java.util.List<ch.qos.logback.classic.spi.ILoggingEvent> capture(Class<?> type, Body body) throws Exception {
        Logger logger = logger(type);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines = new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            body.run();
        } finally {
            logger.detachAppender(lines);
        }
        return lines.list;
    }

    /**
     * The key-value pairs of each captured event named {@code event} ({@code event=...}: the fields of its own a JSON log
     * line shows), in order, with the event's level under {@code "level"}.
     */
    public static java.util.List<java.util.Map<String, Object>> events(java.util.List<ch.qos.logback.classic.spi.ILoggingEvent> lines,
                                                                       String event) {
        java.util.List<java.util.Map<String, Object>> found = new java.util.ArrayList<>();
        for (ch.qos.logback.classic.spi.ILoggingEvent line : lines) {
            java.util.Map<String, Object> pairs = new java.util.LinkedHashMap<>();
            if (line.getKeyValuePairs() != null) {
                line.getKeyValuePairs().forEach(pair -> pairs.put(pair.key, pair.value));
            }
            if (event.equals(pairs.get("event"))) {
                pairs.put("level", line.getLevel().toString());
                found.add(pairs);
            }
        }
        return found;
    }
}
