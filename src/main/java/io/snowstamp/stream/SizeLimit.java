package io.snowstamp.stream;

import io.snowstamp.BadRecordException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Refuses, before anything is issued or added, an input record that would not fit {@code max.request.size} once
 * stamped: it goes to the dead-letter topic whole ({@link BadRecordException.Code#TOO_LARGE}) instead of failing the
 * producer, which would stop the stamper.
 */
final class SizeLimit {
    /**
     * Room kept below max.request.size: batch framing, the headers the stamper adds, and — because
     * a refused record goes to the dead-letter topic whole — Kafka Streams' error headers on it.
     */
    private static final int MARGIN_BYTES = 1024;

    private final int maxRequestSize;
    /** Largest key + value + headers of an input record that still fits max.request.size once stamped. */
    private final long maxRecordBytes;

    /** @param valueGrowth the most the value grows by when stamped (a JSON member, a schema field; 0: header only) */
    SizeLimit(int maxRequestSize, int valueGrowth) {
        this.maxRequestSize = maxRequestSize;
        this.maxRecordBytes = (long) maxRequestSize - MARGIN_BYTES - valueGrowth;
    }

    /** @throws BadRecordException when the record would be too large once stamped */
    void check(Record<byte[], byte[]> record) {
        long size = (record.key() == null ? 0 : record.key().length) + (record.value() == null ? 0 : record.value().length);
        if (size <= maxRecordBytes - 8192) {
            return;     // the common case: far below the limit whatever the headers
        }
        for (Header header : record.headers()) {
            size += header.key().length() + (header.value() == null ? 0 : header.value().length) + 8;
        }
        if (size > maxRecordBytes) {
            throw new BadRecordException(BadRecordException.Code.TOO_LARGE, "record of " + size + " bytes would exceed"
                    + " max.request.size=" + maxRequestSize + " once stamped");
        }
    }
}
