package io.snowstamp.stream;

import io.snowstamp.BadRecordException;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.errors.internals.ExceptionHandlerUtils;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Routes records that cannot be stamped ({@link BadRecordException}) unchanged to the dead-letter
 * topic ({@code errors.dead.letter.queue.topic.name}) and resumes; any other exception is a bug or
 * an outage and stops processing, so nothing is silently dropped. The DLQ record is Kafka Streams'
 * own (original key, value, headers plus {@code __streams.errors.*}), with {@code snowstamp-error}
 * added. Under exactly-once it commits in the same transaction as the input offset.
 */
public final class DeadLetterHandler implements ProcessingExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(DeadLetterHandler.class);

    /** Key under which the runner passes its {@link StamperStats} through the Streams configuration. */
    public static final String STATS_CONFIG = "snowstamp.stats";

    private String deadLetterTopic;
    private StamperStats stats;

    @Override
    public void configure(Map<String, ?> configs) {
        Object topic = configs.get(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG);
        deadLetterTopic = topic == null ? null : topic.toString();
        stats = configs.get(STATS_CONFIG) instanceof StamperStats given ? given : null;
    }

    @Override
    public Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
        if (exception instanceof SetAsideRefused held && deadLetterTopic != null) {
            // refused on its way out of the records set aside (a punctuation: the context names no record): the one it carries
            return handleError(held.context(context), record, held.refused());
        }
        if (!(exception instanceof BadRecordException bad) || deadLetterTopic == null) {
            log.error("stamping failed at {}-{}@{}; stopping rather than dropping the record",
                    context.topic(), context.partition(), context.offset(), exception);
            return Response.fail();
        }
        log.debug("dead-letter {}-{}@{}: {}", context.topic(), context.partition(), context.offset(), bad.getMessage());
        ProducerRecord<byte[], byte[]> dead = ExceptionHandlerUtils.buildDeadLetterQueueRecord(
                deadLetterTopic, context.sourceRawKey(), context.sourceRawValue(), context, exception);
        dead.headers().add(IdHeader.ERROR, bad.code().header().getBytes(StandardCharsets.US_ASCII));
        if (stats != null) {
            stats.deadLetter(bad.code());
        }
        return Response.resume(List.of(dead));
    }
}
