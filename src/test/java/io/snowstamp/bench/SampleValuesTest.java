package io.snowstamp.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.json.JsonIdSplicer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.util.zip.Deflater;

import static org.assertj.core.api.Assertions.assertThat;

/** The bench's values: valid JSON objects of exactly the size asked for, so JSON mode splices every one. */
class SampleValuesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @ValueSource(ints = {100, 101, 1024, 4096, 65536})
    void shouldPadTheSampleToExactlyTheSizeAsJsonTheSplicerAccepts(int bytes) throws Exception {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 64);
        for (long n : new long[] {0, 1, 999_999, 123_456_789}) {
            byte[] value = SampleValues.value(n, bytes);
            assertThat(value).hasSize(bytes);
            JsonNode tree = JSON.readTree(value);
            assertThat(tree.get("n").asLong()).isEqualTo(n);
            assertThat(tree.get("note").asText()).matches("[a-z ]*");
            assertThat(tree.has("id")).isFalse();
            // a member every ~20 bytes, as events have: the parser's work grows with the size
            assertThat(tree.size()).as("members").isGreaterThanOrEqualTo(bytes / 40);
            assertThat(splicer.inspect(value).skip()).isFalse();
        }
    }

    @Test
    void shouldLeaveTheSampleAsItIsBelowItsOwnLength() {
        assertThat(SampleValues.value(42, SampleValues.SAMPLE_BYTES)).isEqualTo(SampleValues.sample(42));
        assertThat(SampleValues.value(42, 1)).isEqualTo(SampleValues.sample(42));
        assertThat(SampleValues.sample(999_999).length).isBetween(80, 90);
    }

    @Test
    void shouldGiveTheSameBytesForTheSameRecordAndDifferentNotesForOthers() {
        assertThat(SampleValues.value(7, 1024)).isEqualTo(SampleValues.value(7, 1024));
        assertThat(JSON.valueToTree(new String(SampleValues.value(7, 1024))).asText())
                .isNotEqualTo(new String(SampleValues.value(8, 1024)));
    }

    @Test
    void shouldCompressLikeTextNotLikeARunOfOneByte() {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (long n = 0; n < 64; n++) {
            all.writeBytes(SampleValues.value(n, 4096));
        }
        byte[] raw = all.toByteArray();
        Deflater deflater = new Deflater(1);
        deflater.setInput(raw);
        deflater.finish();
        byte[] out = new byte[raw.length];
        int compressed = deflater.deflate(out);
        double ratio = (double) raw.length / compressed;
        assertThat(ratio).as("compression ratio").isBetween(1.5, 6.0);
    }

    @Test
    void shouldSpreadKeysOverAThousandUsers() {
        assertThat(new String(SampleValues.key(1))).isEqualTo("user-919");
    }
}
