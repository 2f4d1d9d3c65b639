package io.snowstamp.resume;

import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class StampedInputsTest {
    private static final byte[] PREFIX = "events.raw/3/".getBytes(StandardCharsets.UTF_8);

    private static ConsumerRecord<byte[], byte[]> record(String header, byte[] value) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("events.stamped", 3, 0, null, null);
        if (header != null) {
            record.headers().add(header, value);
        }
        return record;
    }

    private static ConsumerRecord<byte[], byte[]> text(String source) {
        return record(IdHeader.SOURCE, source.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void shouldReadTheInputOffsetFromEitherProvenanceFormatOfThisInputPartitionOnly() {
        assertThat(StampedInputs.sourceOffset(text("events.raw/3/1234"), PREFIX)).isEqualTo(1234);
        assertThat(StampedInputs.sourceOffset(record(IdHeader.COMPACT_SOURCE, IdHeader.binary(77)), PREFIX)).isEqualTo(77);
        assertThat(StampedInputs.sourceOffset(text("events.raw/31/5"), PREFIX)).as("another partition").isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(text("other/3/5"), PREFIX)).as("another topic").isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(text("events.raw/3/x"), PREFIX)).as("malformed").isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(text("events.raw/3/"), PREFIX)).isEqualTo(-1);
        assertThat(StampedInputs.sourceOffset(record(null, null), PREFIX)).as("no provenance").isEqualTo(-1);
    }

    @Test
    void shouldAnswerFromTheStartsWindowWhenItReachesBelowTheFirstInputAndReadOtherwise() {
        StampedInputs.Window window = new StampedInputs.Window("events.raw", 3);
        for (long offset = 95; offset < 103; offset++) {
            window.note(text("events.raw/3/" + offset));
        }
        List<Long> reads = new ArrayList<>();
        StampedInputs known = StampedInputs.of(window, 100, from -> {
            reads.add(from);
            return StampedInputs.NONE;
        });
        assertThat(reads).as("the window saw input 95, below the committed offset 100: nothing older was missed").isEmpty();
        assertThat(known.complete()).isTrue();
        assertThat(known.count()).isEqualTo(3);
        assertThat(known.contains(99)).isFalse();
        assertThat(known.contains(100)).isTrue();
        assertThat(known.contains(102)).isTrue();
        assertThat(known.contains(103)).isFalse();
        assertThat(known.highest()).isEqualTo(102);

        StampedInputs.of(window, 90, from -> {
            reads.add(from);
            return StampedInputs.NONE;
        });
        assertThat(reads).as("nothing below 90 in the window: inputs 90..94 may be further back").containsExactly(90L);
    }
}
