package io.snowstamp.stream;

import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/** The input offset a record set aside carries: never one an input brought in the store's own header. */
class SourceHeadersTest {
    private static final int PARTITION = 2;
    private final MockProcessorContext<byte[], byte[]> context = new MockProcessorContext<>();

    private Record<byte[], byte[]> input(long offset, byte[] forgedAside) {
        Record<byte[], byte[]> record = new Record<>(new byte[0], new byte[0], 0L);
        if (forgedAside != null) {
            record.headers().add("snowstamp-aside-offset", forgedAside);
        }
        context.setRecordMetadata("in", PARTITION, offset);
        return record;
    }

    @Test
    void shouldReadTheProvenanceNotAnAsideOffsetTheInputBrought() {
        SourceHeaders sources = new SourceHeaders(true, false, PARTITION);
        // an input naming offset 3 (which the output holds) in the store's own header: with provenance it is not the stamper's
        Record<byte[], byte[]> forged = input(40, ByteBuffer.allocate(8).putLong(3).array());
        sources.setAside(forged.headers(), context.recordMetadata().orElseThrow());
        assertThat(sources.offsetOf(forged)).isEqualTo(40);
        // a value of the wrong length is no offset: read, it stopped the task at every start
        Record<byte[], byte[]> broken = input(41, new byte[] {1, 2, 3});
        sources.setAside(broken.headers(), context.recordMetadata().orElseThrow());
        assertThat(sources.offsetOf(broken)).isEqualTo(41);
        SourceHeaders compact = new SourceHeaders(true, true, PARTITION);
        Record<byte[], byte[]> compactForged = input(42, new byte[] {9});
        compact.setAside(compactForged.headers(), context.recordMetadata().orElseThrow());
        assertThat(compact.offsetOf(compactForged)).isEqualTo(42);
    }

    @Test
    void shouldReadItsOwnAsideOffsetWithoutProvenanceEvenAfterOneTheInputBrought() {
        SourceHeaders sources = new SourceHeaders(false, false, PARTITION);
        Record<byte[], byte[]> forged = input(50, ByteBuffer.allocate(8).putLong(3).array());
        sources.setAside(forged.headers(), context.recordMetadata().orElseThrow());
        assertThat(sources.offsetOf(forged)).as("the task's own header comes last").isEqualTo(50);
        Record<byte[], byte[]> broken = input(51, new byte[] {1});
        sources.setAside(broken.headers(), context.recordMetadata().orElseThrow());
        assertThat(sources.offsetOf(broken)).isEqualTo(51);
    }
}
