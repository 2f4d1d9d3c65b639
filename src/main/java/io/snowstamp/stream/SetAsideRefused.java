package io.snowstamp.stream;

import io.snowstamp.BadRecordException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Record;

/**
 * A record that waited set aside (its value's schema looked up beside the stream thread) and then turned out bad: thrown
 * from the punctuation that stamps the records set aside, where Kafka Streams' error context names no record.
 * {@link DeadLetterHandler} routes the record it carries — key, value, headers and its input's topic, partition and
 * offset — to the dead-letter topic, as if the refusal had come when the record arrived.
 */
final class SetAsideRefused extends RuntimeException {
    private final transient Record<byte[], byte[]> record;
    private final String topic;
    private final int partition;
    private final long offset;

    SetAsideRefused(BadRecordException refused, Record<byte[], byte[]> record, String topic, int partition, long offset) {
        super(refused.getMessage(), refused);
        this.record = record;
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
    }

    BadRecordException refused() {
        return (BadRecordException) getCause();
    }

    /** The error context of the record, for Kafka Streams' dead-letter record builder. */
    ErrorHandlerContext context(ErrorHandlerContext punctuation) {
        return new ErrorHandlerContext() {
            @Override
            public String topic() {
                return topic;
            }

            @Override
            public int partition() {
                return partition;
            }

            @Override
            public long offset() {
                return offset;
            }

            @Override
            public Headers headers() {
                return record.headers();
            }

            @Override
            public String processorNodeId() {
                return punctuation.processorNodeId();
            }

            @Override
            public TaskId taskId() {
                return punctuation.taskId();
            }

            @Override
            public long timestamp() {
                return record.timestamp();
            }

            @Override
            public byte[] sourceRawKey() {
                return record.key();
            }

            @Override
            public byte[] sourceRawValue() {
                return record.value();
            }
        };
    }
}
