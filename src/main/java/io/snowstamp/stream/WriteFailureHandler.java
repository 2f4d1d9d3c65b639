package io.snowstamp.stream;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * A record Kafka could not take (too large for the broker or the producer, not authorized, ...)
 * stops the stamper with the reason; the input offset is not committed, so nothing is lost and a
 * fixed configuration picks the record up again. Unlike Kafka Streams' default handler it writes
 * no dead letter for it: the dead letter of a failed dead-letter write is the same failure again,
 * and Kafka 4.3 then recurses until the stack overflows. Retriable errors are retried.
 */
public final class WriteFailureHandler implements ProductionExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(WriteFailureHandler.class);

    @Override
    public Response handleError(ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
        if (exception instanceof RetriableException) {
            return Response.retry();
        }
        log.error("cannot write a record for {}-{}@{} to {}: {}; stopping so that nothing is dropped", context.topic(),
                context.partition(), context.offset(), record.topic(), exception.toString());
        return Response.fail();
    }

    @SuppressWarnings("rawtypes")
    @Override
    public Response handleSerializationError(ErrorHandlerContext context, ProducerRecord record, Exception exception,
                                             SerializationExceptionOrigin origin) {
        log.error("cannot serialize a record for {}-{}@{}: {}", context.topic(), context.partition(), context.offset(),
                exception.toString());
        return Response.fail();
    }

    @Override
    public void configure(Map<String, ?> configs) {
        // nothing to configure
    }
}
