package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import org.junit.jupiter.api.Test;

class WireFormatTest {

    @Test
    void shouldReadTheSchemaIdBigEndian() {
        assertThat(WireFormat.schemaId(new byte[] {0, 0, 0, 0, 1})).isEqualTo(1);
        assertThat(WireFormat.schemaId(new byte[] {0, 0x7F, (byte) 0xFF, 0, 2, 42})).isEqualTo(0x7FFF0002);
    }

    @Test
    void shouldRefuseValuesWithoutTheFrame() {
        assertThat(refusal(null).getMessage()).contains("tombstone");
        assertThat(refusal(new byte[] {0, 0, 1}).getMessage())
                .isEqualTo("value of 3 bytes is shorter than the 5-byte schema-registry frame");
        assertThat(refusal("{\"a\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8)).getMessage())
                .isEqualTo("value starts with byte 123, not the schema-registry magic byte 0");
    }

    @Test
    void shouldReadMessageIndexesAsConfluentWritesThem() {
        assertThat(WireFormat.messageIndexes(new byte[] {0, 0, 0, 0, 1, 0, 8})).containsExactly(0);
        // count 2 (zig-zag 4), then 1 (2) and 0 (0)
        assertThat(WireFormat.messageIndexes(new byte[] {0, 0, 0, 0, 1, 4, 2, 0})).containsExactly(1, 0);
        // index 64: zig-zag 128, two bytes
        assertThat(WireFormat.messageIndexes(new byte[] {0, 0, 0, 0, 1, 2, (byte) 0x80, 1})).containsExactly(64);
    }

    @Test
    void shouldRefuseCutOffOrNegativeMessageIndexes() {
        assertThat(indexRefusal(new byte[] {0, 0, 0, 0, 1}).getMessage()).isEqualTo("value ends inside its message indexes");
        assertThat(indexRefusal(new byte[] {0, 0, 0, 0, 1, 4, 2}).getMessage()).isEqualTo("value ends inside its message indexes");
        assertThat(indexRefusal(new byte[] {0, 0, 0, 0, 1, 1}).getMessage()).contains("count -1");
        assertThat(indexRefusal(new byte[] {0, 0, 0, 0, 1, 2, 1}).getMessage()).contains("index -1");
    }

    @Test
    void shouldWriteVarintsAsProtobufAndAvroDo() {
        assertThat(Varints.bytes(0)).containsExactly(0);
        assertThat(Varints.bytes(300)).containsExactly(0xAC, 0x02);
        assertThat(Varints.bytes(-1)).hasSize(10);
        assertThat(Varints.zigZag(-1)).isEqualTo(1);
        assertThat(Varints.zigZag(1)).isEqualTo(2);
        assertThat(Varints.zigZag(Long.MIN_VALUE)).isEqualTo(-1);
        for (long v : new long[] {0, 1, 127, 128, 16_383, 16_384, Long.MAX_VALUE, -1}) {
            assertThat(Varints.size(v)).as("size of %d", v).isEqualTo(Varints.bytes(v).length);
        }
    }

    private static BadRecordException refusal(byte[] value) {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> WireFormat.schemaId(value));
        assertThat(refused.code()).isEqualTo(Code.NO_MAGIC_BYTE);
        return refused;
    }

    private static BadRecordException indexRefusal(byte[] value) {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> WireFormat.messageIndexes(value));
        assertThat(refused.code()).isEqualTo(Code.BAD_MESSAGE_INDEXES);
        return refused;
    }
}
