package io.snowstamp.embedded;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.rolling.FixedWindowRollingPolicy;
import ch.qos.logback.core.rolling.RollingFileAppender;
import ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy;
import ch.qos.logback.core.util.FileSize;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Sends the in-process broker's log to {@code <dataDir>/broker.log}, so the console carries
 * snowstamp's own lines and the broker's real failures only.
 *
 * <p>WHY: on a cold broker the stamper's first transactions race the completion of the ones
 * before them: the broker answers a produce with {@code CONCURRENT_TRANSACTIONS} while the previous
 * transaction's markers are still being written, and then — transactions v2, KAFKA-18202 — rejects
 * the batches behind it (a first sequence other than 0 for the new producer epoch, or a gap after
 * the rejected batch) as {@code OUT_OF_ORDER_SEQUENCE_NUMBER}, logging each rejection at ERROR with
 * the exception. The client retries them and they succeed; it is the broker's start-up noise, not
 * a fault (a first {@code demo} printed eight such ERRORs and a dozen retry WARNs). Those lines, the
 * producer's WARN for each such retry, the controller's "exceptionally slow event" reports
 * (logged at ERROR when a loaded machine delays it), and the node's own controller registration sent a
 * moment before its controller became active on a restart ({@code NotControllerException} at ERROR, with
 * a stack trace; retried at once and registered: seen on a loaded machine's second {@code run}) go to
 * the file only: a sequence the producer
 * really cannot recover from surfaces in the producer and in Kafka Streams, not here. Every other
 * broker event at ERROR still reaches the console (through the configured console appender, text
 * or JSON), and the file keeps the broker's INFO log for diagnosis (rolled at 10 MB, three old files
 * kept: broker.log.1..3).
 *
 * <p>Only meaningful with Logback as the SLF4J backend (the shaded jar); otherwise a no-op.
 */
final class BrokerLog implements AutoCloseable {
    static final String FILE_NAME = "broker.log";
    /** The loggers of the broker itself (the clients in this JVM log under org.apache.kafka.clients/streams). */
    private static final List<String> BROKER_LOGGERS = List.of("kafka", "state.change.logger", "org.apache.kafka.controller",
            "org.apache.kafka.server", "org.apache.kafka.raft", "org.apache.kafka.metadata", "org.apache.kafka.storage",
            "org.apache.kafka.coordinator", "org.apache.kafka.image", "org.apache.kafka.queue", "org.apache.kafka.snapshot",
            "org.apache.kafka.network", "org.apache.kafka.security", "org.apache.kafka.timeline");
    /** The controller reports slow events at ERROR; a loaded machine is not a broker failure. */
    private static final String SLOW_EVENT_MONITOR = "org.apache.kafka.controller.EventPerformanceMonitor";
    /** The producer's retry WARNs ("Got error produce response ... retrying ...") come from here. */
    private static final String PRODUCER_SENDER = "org.apache.kafka.clients.producer.internals.Sender";
    private static final String CONSOLE_APPENDER = "STDERR";
    /** A broker that runs for months must not fill the disk: broker.log rolls at this size, keeping three old files. */
    private static final String MAX_FILE_SIZE = "10MB";
    private static final int OLD_FILES = 3;

    private final List<Restore> restores = new ArrayList<>();
    private final List<Appender<ILoggingEvent>> appenders = new ArrayList<>();
    private final Path file;

    private BrokerLog(Path file) {
        this.file = file;
    }

    /** Starts writing the broker's log to {@code <dataDir>/broker.log} (appended); {@link #close} undoes it. */
    static BrokerLog redirect(Path dataDir) {
        Path file = dataDir.toAbsolutePath().resolve(FILE_NAME);
        BrokerLog log = new BrokerLog(file);
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return log;
        }
        // the console is the root logger's appender STDERR (logback.xml); any other configuration: all root appenders
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        List<Appender<ILoggingEvent>> console = new ArrayList<>();
        if (root.getAppender(CONSOLE_APPENDER) != null) {
            console.add(root.getAppender(CONSOLE_APPENDER));
        } else {
            root.iteratorForAppenders().forEachRemaining(console::add);
        }
        RollingFileAppender<ILoggingEvent> fileAppender = fileAppender(context, file);
        Appender<ILoggingEvent> failures = new RealFailures(console);
        failures.setContext(context);
        failures.start();
        log.appenders.add(fileAppender);
        log.appenders.add(failures);
        String configured = System.getenv("SNOWSTAMP_LOG_KAFKA_LEVEL");
        Level fileLevel = configured == null ? Level.INFO : Level.toLevel(configured, Level.INFO);
        for (String name : BROKER_LOGGERS) {
            log.take(context.getLogger(name), fileLevel, fileAppender, failures);
        }
        // the producer's own level stays as configured: only where its WARNs go changes
        Logger sender = context.getLogger(PRODUCER_SENDER);
        log.take(sender, sender.getEffectiveLevel(), fileAppender, failures);
        return log;
    }

    private void take(Logger logger, Level level, Appender<ILoggingEvent> fileAppender, Appender<ILoggingEvent> failures) {
        restores.add(new Restore(logger, logger.getLevel(), logger.isAdditive()));
        logger.setLevel(level);
        logger.setAdditive(false);
        logger.addAppender(fileAppender);
        logger.addAppender(failures);
    }

    private static RollingFileAppender<ILoggingEvent> fileAppender(LoggerContext context, Path file) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX, UTC} %-5level [%thread] %logger - %msg%n");
        encoder.start();
        RollingFileAppender<ILoggingEvent> appender = new RollingFileAppender<>();
        appender.setContext(context);
        appender.setName("snowstamp-broker-log");
        appender.setFile(file.toString());
        appender.setAppend(true);
        appender.setEncoder(encoder);
        FixedWindowRollingPolicy rolling = new FixedWindowRollingPolicy();
        rolling.setContext(context);
        rolling.setParent(appender);
        rolling.setFileNamePattern(file + ".%i");
        rolling.setMinIndex(1);
        rolling.setMaxIndex(OLD_FILES);
        rolling.start();
        SizeBasedTriggeringPolicy<ILoggingEvent> trigger = new SizeBasedTriggeringPolicy<>();
        trigger.setContext(context);
        trigger.setMaxFileSize(FileSize.valueOf(MAX_FILE_SIZE));
        trigger.start();
        appender.setRollingPolicy(rolling);
        appender.setTriggeringPolicy(trigger);
        appender.start();
        return appender;
    }

    /** The file the broker logs to. */
    Path file() {
        return file;
    }

    /** Gives the loggers back their levels and appenders, and closes the file. */
    @Override
    public void close() {
        for (Restore restore : restores) {
            appenders.forEach(restore.logger()::detachAppender);
            restore.logger().setLevel(restore.level());
            restore.logger().setAdditive(restore.additive());
        }
        appenders.forEach(Appender::stop);
    }

    private record Restore(Logger logger, Level level, boolean additive) {
    }

    /**
     * Passes to the console what is a real failure: broker events at ERROR and producer WARNs,
     * except the retriable sequence rejections, their retries, slow-event reports and the controller start race described above.
     */
    static final class RealFailures extends AppenderBase<ILoggingEvent> {
        private final List<Appender<ILoggingEvent>> console;

        RealFailures(List<Appender<ILoggingEvent>> console) {
            this.console = List.copyOf(console);
            setName("snowstamp-broker-failures");
        }

        @Override
        protected void append(ILoggingEvent event) {
            if (isRealFailure(event)) {
                console.forEach(appender -> appender.doAppend(event));
            }
        }

        static boolean isRealFailure(ILoggingEvent event) {
            boolean producer = event.getLoggerName().equals(PRODUCER_SENDER);
            if (!event.getLevel().isGreaterOrEqual(producer ? Level.WARN : Level.ERROR)) {
                return false;
            }
            String message = event.getFormattedMessage();
            if (producer) {
                return !(message.contains("retrying") && (message.contains("Error: CONCURRENT_TRANSACTIONS")
                        || message.contains("Error: OUT_OF_ORDER_SEQUENCE_NUMBER")));
            }
            if (event.getLoggerName().equals(SLOW_EVENT_MONITOR)) {
                return false;
            }
            IThrowableProxy thrown = event.getThrowableProxy();
            return !(thrown != null && (thrown.getClassName().endsWith(".OutOfOrderSequenceException") || startRace(thrown)));
        }

        /** The single node asked itself to register before its controller was active: it asks again. */
        private static boolean startRace(IThrowableProxy thrown) {
            for (IThrowableProxy cause = thrown; cause != null; cause = cause.getCause()) {
                if (cause.getClassName().endsWith(".NotControllerException")) {
                    return true;
                }
            }
            return false;
        }
    }
}
