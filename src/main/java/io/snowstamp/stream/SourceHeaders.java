package io.snowstamp.stream;

import io.snowstamp.state.IdHeader;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

import java.nio.charset.StandardCharsets;

/**
 * A record's provenance, the input's {@code topic/partition/offset}: written as a header ({@code stamp.provenance}, text or
 * compact), and read back from a record set aside, which carries it in the pending-records store (without provenance in a
 * header of the store's own). One per task; separate from {@link StampProcessor} because both the record's path and the
 * records set aside use it.
 */
final class SourceHeaders {
    /**
     * Without provenance: the input offset of a record set aside, for a dead-letter record of it on its way out; removed
     * there (never forwarded). Eight bytes, big-endian.
     */
    private static final String ASIDE_OFFSET = "snowstamp-aside-offset";

    private final boolean provenance;
    private final boolean compact;
    private final int partition;
    private String sourceTopic;
    private int sourcePartition = -1;
    private byte[] sourcePrefix;

    SourceHeaders(boolean provenance, boolean compact, int partition) {
        this.provenance = provenance;
        this.compact = compact;
        this.partition = partition;
    }

    /** Adds the provenance header of {@code source} (nothing without {@code stamp.provenance}). */
    void add(Headers headers, RecordMetadata source) {
        if (!provenance) {
            return;
        }
        if (compact) {
            headers.add(IdHeader.COMPACT_SOURCE, IdHeader.binary(source.offset()));    // topic and partition are implied
            return;
        }
        // "topic/partition/" is the same for every record of the task: encode it once
        if (!source.topic().equals(sourceTopic) || source.partition() != sourcePartition) {
            sourceTopic = source.topic();
            sourcePartition = source.partition();
            sourcePrefix = (sourceTopic + "/" + sourcePartition + "/").getBytes(StandardCharsets.UTF_8);
        }
        headers.add(IdHeader.SOURCE, IdHeader.ascii(sourcePrefix, source.offset()));
    }

    /** A record set aside keeps its input offset: in its provenance header, or without provenance in one of the store's own. */
    void setAside(Headers headers, RecordMetadata source) {
        add(headers, source);
        if (!provenance) {
            headers.add(ASIDE_OFFSET, IdHeader.binary(source.offset()));
        }
    }

    /** The store's own header removed from a record set aside, on its way out. */
    static void leavingStore(Headers headers) {
        headers.remove(ASIDE_OFFSET);
    }

    /**
     * The input offset a record set aside carries in its provenance header, or without provenance its own (-1: none). The
     * store's own header counts only without provenance, where this task added it last to every record it set aside: with
     * provenance it can only have come with the input (a forged or a user's header), and a wrong offset there would skip
     * an input as already stamped, a wrong length stop the task at every start.
     */
    long offsetOf(Record<byte[], byte[]> record) {
        Header aside = provenance ? null : record.headers().lastHeader(ASIDE_OFFSET);
        if (aside != null && aside.value() != null && aside.value().length == Long.BYTES) {
            return IdHeader.parseBinary(aside.value());
        }
        String source = IdHeader.sourceText(record.headers(), "", partition);
        return source == null ? -1 : Long.parseLong(source.substring(source.lastIndexOf('/') + 1));
    }
}
