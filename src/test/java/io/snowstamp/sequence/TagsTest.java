package io.snowstamp.sequence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.snowstamp.BadRecordException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

class TagsTest {

    @Test
    void shouldPlaceATagWhereKafkasDefaultPartitionerPlacesItsKey() {
        for (int i = 0; i < 1_000; i++) {
            String tag = "tag-" + i + "-\u00e9";
            byte[] bytes = tag.getBytes(StandardCharsets.UTF_8);
            for (int partitions : new int[] {1, 3, 4, 12}) {
                assertThat(Tags.partition(tag, partitions)).isEqualTo(BuiltInPartitioner.partitionForKey(bytes, partitions));
            }
        }
    }

    @Test
    void shouldAcceptPrintableTagsUpTo200Characters() {
        assertThat(Tags.problem("order")).isNull();
        assertThat(Tags.problem("Rechnung/2026 \u00fc \uD83D\uDE00")).isNull();
        assertThat(Tags.problem("x".repeat(200))).isNull();
    }

    @Test
    void shouldExplainWhatIsWrongWithATag() {
        assertThat(Tags.problem("")).contains("empty");
        assertThat(Tags.problem(null)).contains("empty");
        assertThat(Tags.problem("x".repeat(201))).contains("this one has 201");
        assertThat(Tags.problem("a\u0000b")).contains("U+0000 at index 1");
        assertThat(Tags.problem("line\n")).contains("U+000A");
    }

    @Test
    void shouldReadATagFromAKey() {
        assertThat(Tags.fromKey("order".getBytes(StandardCharsets.UTF_8))).isEqualTo("order");
        assertThat(catchThrowableOfType(BadRecordException.class, () -> Tags.fromKey(null)).code())
                .isEqualTo(BadRecordException.Code.NO_TAG);
        assertThat(catchThrowableOfType(BadRecordException.class, () -> Tags.fromKey(new byte[] {(byte) 0xff})).code())
                .isEqualTo(BadRecordException.Code.INVALID_TAG);
        assertThat(BadRecordException.Code.UNKNOWN_TAG.header()).isEqualTo("unknown-tag");
    }
}
