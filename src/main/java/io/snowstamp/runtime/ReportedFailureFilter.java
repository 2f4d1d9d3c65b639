package io.snowstamp.runtime;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops Kafka Streams' own report of the error that stopped the stamper ("Encountered the following
 * exception during processing and the registered exception handler opted to ..."), with its stack
 * trace: {@link StreamsRunner}'s exception handler has already logged the same error in one line,
 * and the CLI prints it as its error line. Installed by {@code logback.xml}.
 */
public final class ReportedFailureFilter extends TurboFilter {
    private static final String LOGGER = "org.apache.kafka.streams.KafkaStreams";
    /** Kafka's LogContext puts "stream-client [...] " before the format: matched anywhere. */
    private static final String PREFIX = "Encountered the following exception during processing";

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        return level == Level.ERROR && format != null && format.contains(PREFIX) && LOGGER.equals(logger.getName())
                ? FilterReply.DENY : FilterReply.NEUTRAL;
    }
}
