package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateSerde;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChangelogReaderTest {
    private static final String TOPIC = "app-worker-state-changelog";
    private static final WorkerState STATE = new WorkerState("t41.d0.w10.s12.u1ms.e1577836800000.mid", 2, 3, "h/t", 1, 2, 3, 4);

    private static ConsumerRecord<byte[], byte[]> record(byte[] key, byte[] value) {
        return new ConsumerRecord<>(TOPIC, 2, 17, key, value);
    }

    @Test
    void shouldDecodeTheKeyAsTheStreamsIntegerSerializerWritesIt() {
        byte[] key = new IntegerSerializer().serialize(TOPIC, 2);

        ChangelogEntry entry = ChangelogReader.decode(record(key, new WorkerStateSerde().serialize(TOPIC, STATE)));

        assertThat(entry).isEqualTo(new ChangelogEntry(2, 17, ConsumerRecord.NO_TIMESTAMP, 2, STATE));
        assertThat(ChangelogReader.decode(record(key, null)).state()).isNull();
    }

    @Test
    void shouldRefuseWhatItCannotReadNamingWhereItIs() {
        assertThatThrownBy(() -> ChangelogReader.decode(record(new byte[]{1, 2}, null)))
                .isInstanceOf(SnowstampException.class)
                .hasMessage("changelog record " + TOPIC + "-2@17 has a key of 2 bytes: expected the partition number as a 4-byte int");
        assertThatThrownBy(() -> ChangelogReader.decode(record(new byte[4], new byte[]{9, 0})))
                .hasMessageStartingWith("changelog record " + TOPIC + "-2@17: worker-state record has format version 9");
    }
}
