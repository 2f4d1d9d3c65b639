package io.snowstamp.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AvroSampleValuesTest {

    @ParameterizedTest
    @ValueSource(ints = {80, 1024, 4096})
    void shouldMakeFramedRecordsOfAboutTheSizeAskedFor(int bytes) throws Exception {
        Schema schema = AvroSampleValues.schema(bytes);
        byte[] value = AvroSampleValues.value(12_345, schema, 77);

        assertThat(value.length).isBetween(bytes - 25, bytes + 25);
        assertThat(value).startsWith(0, 0, 0, 0, 77);
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, null);
        GenericRecord record = new GenericDatumReader<GenericRecord>(schema).read(null, decoder);
        assertThat(decoder.isEnd()).isTrue();
        assertThat(record.get("n")).isEqualTo(12_345L);
        assertThat(record.get("event").toString()).isEqualTo("order.created");
    }

    @Test
    void shouldMakeTheSameBytesForTheSameRecord() {
        Schema schema = AvroSampleValues.schema(1024);
        assertThat(AvroSampleValues.value(9, schema, 1)).isEqualTo(AvroSampleValues.value(9, schema, 1))
                .isNotEqualTo(AvroSampleValues.value(10, schema, 1));
    }
}
