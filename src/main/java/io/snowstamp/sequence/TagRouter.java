package io.snowstamp.sequence;

import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.SequenceSettings;
import io.snowstamp.config.StampSettings;
import io.snowstamp.state.IdHeader;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import io.snowstamp.json.JsonIdSplicer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

import java.nio.charset.StandardCharsets;

/**
 * The first step of sequence mode, on the input partitions: finds each record's tag, refuses every
 * record that cannot be numbered — so that it reaches the dead-letter topic as the input record it
 * is — and forwards the rest keyed by tag, wrapped in an {@link Envelope}, to the repartition topic.
 * Refused: no tag or an invalid one, a tag that is not registered (unless
 * {@code sequence.auto-create=true}), JSON the splice would refuse ({@code stamp.json-field}), and
 * records too large to fit once wrapped or stamped.
 */
final class TagRouter implements Processor<byte[], byte[], byte[], byte[]> {
    /** As in snowflake mode: batch framing, the headers the stamper adds, Kafka Streams' error headers on a dead letter. */
    private static final int SIZE_MARGIN_BYTES = 1024;
    /** The two headers added later: names and a 20-digit number. */
    private static final int STAMP_HEADERS_BYTES = 64;

    private final StampSettings stamp;
    private final int maxRequestSize;
    private final SequenceSettings settings;
    private final TagSource source;
    private final JsonIdSplicer splicer;
    private final long maxRecordBytes;

    private ProcessorContext<byte[], byte[]> context;
    private TagRegistry registry;

    TagRouter(SequenceSettings settings, StampSettings stamp, ConnectionSettings connection) {
        this.stamp = stamp;
        this.settings = settings;
        this.source = new TagSource(settings, stamp.maxDepth());
        this.splicer = JsonIdSplicer.of(stamp);
        this.maxRequestSize = connection.maxRequestSize();
        this.maxRecordBytes = maxRequestSize - SIZE_MARGIN_BYTES - STAMP_HEADERS_BYTES
                - (splicer == null ? 0 : stamp.jsonField().length() + 22);
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        this.context = context;
        this.registry = new TagRegistry(context.getStateStore(SequenceNames.TAGS_STORE));
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        if (splicer != null) {
            splicer.inspect(record.value());        // refused here, or it would reach the DLQ wrapped
        }
        String tag = source.tagOf(record.key(), record.value());
        byte[] tagBytes = tag.getBytes(StandardCharsets.UTF_8);
        checkSize(record, tagBytes.length);
        TagDefinition definition = registry.get(tag);
        if (definition == null && !settings.autoCreate()) {
            throw new BadRecordException(Code.UNKNOWN_TAG, "tag '" + tag + "' is not registered in " + settings.tagsTopic()
                    + " (snowstamp tags create, or sequence.auto-create=true)");
        }
        addSourceHeader(record);
        context.forward(new Record<>(tagBytes, new Envelope(record.key(), record.value(), definition).encode(),
                record.timestamp(), record.headers()));
    }

    /**
     * Refuses a record that would exceed max.request.size on the repartition topic (tag key,
     * envelope, provenance) or on the output (tag and number headers).
     */
    private void checkSize(Record<byte[], byte[]> record, int tagBytes) {
        long key = record.key() == null ? 0 : record.key().length;
        long size = 2 * key + (record.value() == null ? 0 : record.value().length) + 2L * tagBytes + Envelope.OVERHEAD;
        if (size <= maxRecordBytes - 8192) {
            return;     // the common case: far below the limit whatever the headers
        }
        for (Header header : record.headers()) {
            size += header.key().length() + (header.value() == null ? 0 : header.value().length) + 8;
        }
        if (size > maxRecordBytes) {
            throw new BadRecordException(Code.TOO_LARGE, "record of " + size + " bytes with its tag would exceed"
                    + " max.request.size=" + maxRequestSize + " once routed and stamped");
        }
    }

    private void addSourceHeader(Record<byte[], byte[]> record) {
        if (stamp.provenance()) {
            RecordMetadata source = context.recordMetadata().orElseThrow();
            String src = source.topic() + "/" + source.partition() + "/" + source.offset();
            record.headers().add(IdHeader.SOURCE, src.getBytes(StandardCharsets.UTF_8));
        }
    }
}
