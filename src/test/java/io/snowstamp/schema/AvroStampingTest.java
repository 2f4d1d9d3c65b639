package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Avro values stamped without decoding, judged by Apache Avro's own reader with the output schema. */
class AvroStampingTest {
    private static final String ORDER = """
            {"type": "record", "name": "Order", "namespace": "com.acme", "doc": "an order", "aliases": ["Purchase"],
             "owner": "team-a",
             "fields": [
               {"name": "customer", "type": "string"},
               {"name": "quantity", "type": "int", "default": 1},
               {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
               {"name": "note", "type": ["null", "string"], "default": null},
               {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
               {"name": "lines", "type": {"type": "array", "items":
                 {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string"}, {"name": "price", "type": "double"}]}}},
               {"name": "tags", "type": {"type": "map", "values": "int"}},
               {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
               {"name": "raw", "type": "bytes"}
             ]}""";
    private static final int INPUT_ID = 7;
    private static final int OUTPUT_ID = 0x01020304;

    @ParameterizedTest
    @ValueSource(longs = {0L, 1L, 63L, 64L, 912_099_150_311_464_960L, Long.MAX_VALUE, -1L, Long.MIN_VALUE})
    void shouldAppendTheIdSoThatAvroReadsEveryFieldAndTheId(long id) throws IOException {
        Schema input = new Schema.Parser().parse(ORDER);
        GenericRecord order = sampleOrder(input);
        Evolution evolution = AvroEvolution.evolve(ORDER, "id", OnExistingField.REJECT);
        assertThat(evolution.kind()).isEqualTo(Evolution.Kind.APPEND);

        byte[] stamped = Stamping.avro(ORDER, INPUT_ID, evolution, "id", OUTPUT_ID).stamp(framed(INPUT_ID, encode(input, order)), id);

        assertThat(stamped[0]).isZero();
        assertThat(ByteBuffer.wrap(stamped, 1, 4).getInt()).isEqualTo(OUTPUT_ID);
        Schema output = new Schema.Parser().parse(evolution.schema());
        GenericRecord read = decodeWhole(output, stamped);
        assertThat(read.get("id")).isEqualTo(id);
        for (Schema.Field field : input.getFields()) {
            // as text: Avro reads strings as Utf8, written as String
            assertThat(GenericData.get().toString(read.get(field.name()))).as(field.name())
                    .isEqualTo(GenericData.get().toString(order.get(field.name())));
        }
    }

    @Test
    void shouldKeepTheInputSchemaWholeAndAddALongFieldWithADefaultLast() {
        Schema input = new Schema.Parser().parse(ORDER);
        Schema output = new Schema.Parser().parse(AvroEvolution.evolve(ORDER, "id", OnExistingField.REJECT).schema());

        assertThat(output.getFullName()).isEqualTo("com.acme.Order");
        assertThat(output.getDoc()).isEqualTo("an order");
        assertThat(output.getAliases()).containsExactly("com.acme.Purchase");
        assertThat(output.getProp("owner")).isEqualTo("team-a");
        assertThat(output.getFields()).hasSize(input.getFields().size() + 1);
        for (Schema.Field field : input.getFields()) {
            Schema.Field copy = output.getField(field.name());
            assertThat(copy.pos()).isEqualTo(field.pos());
            assertThat(copy.schema()).isEqualTo(field.schema());
            assertThat(copy.defaultVal()).isEqualTo(field.defaultVal());
        }
        Schema.Field id = output.getFields().get(output.getFields().size() - 1);
        assertThat(id.name()).isEqualTo("id");
        assertThat(id.schema().getType()).isEqualTo(Schema.Type.LONG);
        assertThat(id.defaultVal()).isEqualTo(AvroEvolution.DEFAULT);
    }

    @Test
    void shouldLetTheOutputSubjectEvolveWithTheInput() {
        // BACKWARD, as registries check it: the newest output schema reads data of the previous one; and an
        // output schema reads the input's data (the default), so the output subject may start on un-stamped data
        String v1 = "{\"type\":\"record\",\"name\":\"E\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}";
        String v2 = "{\"type\":\"record\",\"name\":\"E\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"},"
                + "{\"name\":\"b\",\"type\":\"int\",\"default\":0}]}";
        Schema out1 = new Schema.Parser().parse(AvroEvolution.evolve(v1, "id", OnExistingField.REJECT).schema());
        Schema out2 = new Schema.Parser().parse(AvroEvolution.evolve(v2, "id", OnExistingField.REJECT).schema());

        assertThat(compatible(out2, out1)).isTrue();
        assertThat(compatible(out1, new Schema.Parser().parse(v1))).isTrue();
        assertThat(compatible(out2, new Schema.Parser().parse(v1))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"string\"", "\"long\"", "{\"type\":\"array\",\"items\":\"int\"}",
            "[\"null\",{\"type\":\"record\",\"name\":\"E\",\"fields\":[]}]", "{\"type\":\"enum\",\"name\":\"S\",\"symbols\":[\"A\"]}"})
    void shouldRefuseATopLevelSchemaThatIsNotARecord(String schema) {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> AvroEvolution.evolve(schema, "id", OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.NOT_RECORD);
        assertThat(refused.getMessage()).contains("not a record");
    }

    @Test
    void shouldRefuseAStoredSchemaWhoseDefaultDoesNotFitItsType() {
        // Avro's parser refuses it; the output schema would carry the same default
        String legacy = "{\"type\":\"record\",\"name\":\"E\",\"fields\":[{\"name\":\"q\",\"type\":\"int\",\"default\":\"x\"}]}";
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> AvroEvolution.evolve(legacy, "id", OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.INVALID_SCHEMA);
        assertThat(refused.getMessage()).contains("Invalid default for field q");
    }

    @Test
    void shouldRefuseSchemaTextThatDoesNotParse() {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> AvroEvolution.evolve("{\"type\":\"record\"", "id", OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.INVALID_SCHEMA);
    }

    @Test
    void shouldRefuseAnExistingFieldUnderReject() {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> AvroEvolution.evolve(ORDER, "customer", OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.FIELD_EXISTS);
        assertThat(refused.getMessage()).isEqualTo(
                "field 'customer' already exists in Avro record com.acme.Order (stamp.on-existing-field=reject)");
    }

    @Test
    void shouldKeepAValueWithTheFieldUnchangedButItsSchemaId() throws IOException {
        String schema = withIdField("long");
        byte[] value = valueWithId5(schema);
        Evolution evolution = AvroEvolution.evolve(schema, "id", OnExistingField.KEEP);

        byte[] stamped = Stamping.avro(schema, INPUT_ID, evolution, "id", OUTPUT_ID).stamp(value, 99L);

        assertThat(evolution.kind()).isEqualTo(Evolution.Kind.KEEP);
        assertThat(java.util.Arrays.copyOfRange(stamped, 5, stamped.length)).isEqualTo(java.util.Arrays.copyOfRange(value, 5, value.length));
        assertThat(decodeWhole(new Schema.Parser().parse(evolution.schema()), stamped).get("id")).isEqualTo(5L);
        assertThat(Stamping.avro(schema, INPUT_ID, evolution, "id", INPUT_ID).stamp(value, 99L)).isSameAs(value);
    }

    /**
     * {@code overwrite} replaces the field's varint in place: the fields around it keep the producer's bytes (a block with
     * its byte size, which a decode and encode again would write as a plain count), and a million null items cost no
     * decode (Avro's cap of them in a few bytes was a second and a half a value).
     */
    @Test
    void shouldOverwriteALongFieldInPlaceKeepingEveryOtherByte() throws IOException {
        String schema = "{\"type\":\"record\",\"name\":\"Top\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"long\"}},"
                + "{\"name\":\"b\",\"type\":{\"type\":\"array\",\"items\":\"null\"}},{\"name\":\"id\",\"type\":\"long\"},"
                + "{\"name\":\"tail\",\"type\":\"string\"}]}";
        byte[] before = {3, 4, 2, 4, 0,             // a: a block of -2 items in 2 bytes (1, 2), then the end
            (byte) 0x80, (byte) 0x89, 0x7A, 0};     // b: 1,000,000 nulls, then the end
        byte[] after = {2, 'x'};                    // tail: "x"
        byte[] payload = new byte[before.length + 1 + after.length];
        System.arraycopy(before, 0, payload, 0, before.length);
        payload[before.length] = 10;                // id: 5
        System.arraycopy(after, 0, payload, before.length + 1, after.length);
        byte[] value = framed(INPUT_ID, payload);
        Evolution evolution = AvroEvolution.evolve(schema, "id", OnExistingField.OVERWRITE);
        Stamping stamping = Stamping.avro(schema, INPUT_ID, evolution, "id", OUTPUT_ID);
        stamping.check(value);

        byte[] stamped = stamping.stamp(value, 912_099_150_311_464_960L);

        long id = 912_099_150_311_464_960L;
        byte[] varint = new byte[10];
        int size = Varints.write(Varints.zigZag(id), varint, 0);
        assertThat(java.util.Arrays.copyOfRange(stamped, 5, 5 + before.length)).isEqualTo(before);
        assertThat(java.util.Arrays.copyOfRange(stamped, 5 + before.length, 5 + before.length + size))
                .isEqualTo(java.util.Arrays.copyOf(varint, size));
        assertThat(java.util.Arrays.copyOfRange(stamped, 5 + before.length + size, stamped.length)).isEqualTo(after);
        GenericRecord read = decodeWhole(new Schema.Parser().parse(evolution.schema()), stamped);
        assertThat(read.get("id")).isEqualTo(id);
        assertThat(read.get("tail").toString()).isEqualTo("x");
        assertThat(ByteBuffer.wrap(stamped, 1, 4).getInt()).isEqualTo(OUTPUT_ID);
    }

    @Test
    void shouldOverwriteALongField() throws IOException {
        String schema = withIdField("long");
        Evolution evolution = AvroEvolution.evolve(schema, "id", OnExistingField.OVERWRITE);

        byte[] stamped = Stamping.avro(schema, INPUT_ID, evolution, "id", OUTPUT_ID).stamp(valueWithId5(schema), 912_099_150_311_464_960L);

        GenericRecord read = decodeWhole(new Schema.Parser().parse(evolution.schema()), stamped);
        assertThat(read.get("id")).isEqualTo(912_099_150_311_464_960L);
        assertThat(read.get("name").toString()).isEqualTo("x");
        assertThat(ByteBuffer.wrap(stamped, 1, 4).getInt()).isEqualTo(OUTPUT_ID);
    }

    @Test
    void shouldRefuseToOverwriteAFieldOfAnotherType() {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> AvroEvolution.evolve(withIdField("string"), "id", OnExistingField.OVERWRITE));
        assertThat(refused.code()).isEqualTo(Code.FIELD_EXISTS);
        assertThat(refused.getMessage()).contains("of type string");
    }

    @Test
    void shouldRefuseAValueThatDoesNotDecodeWhenOverwriting() {
        Evolution evolution = AvroEvolution.evolve(withIdField("long"), "id", OnExistingField.OVERWRITE);
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> Stamping.avro(withIdField("long"), INPUT_ID, evolution, "id", OUTPUT_ID).stamp(new byte[] {0, 0, 0, 0, 7, 20, 'a'}, 1L));
        assertThat(refused.code()).isEqualTo(Code.INVALID_VALUE);
    }

    @Test
    void shouldRefuseARecordThatContainsItselfAndStampOneThatContainsAnotherRecursiveType() throws IOException {
        String node = "{\"type\":\"record\",\"name\":\"Node\",\"namespace\":\"t\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"
                + "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";
        String mutual = "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"b\",\"type\":{\"type\":\"record\",\"name\":\"B\","
                + "\"fields\":[{\"name\":\"as\",\"type\":{\"type\":\"array\",\"items\":\"A\"}}]}}]}";
        for (String recursive : List.of(node, mutual)) {
            BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                    () -> AvroEvolution.evolve(recursive, "id", OnExistingField.REJECT));
            assertThat(refused).as(recursive).isNotNull();
            assertThat(refused.code()).isEqualTo(Code.RECURSIVE_RECORD);
        }
        assertThat(catchThrowableOfType(BadRecordException.class, () -> AvroEvolution.evolve(node, "id", OnExistingField.REJECT))
                .getMessage()).isEqualTo("Avro record t.Node contains itself (a recursive type): a field added to it would be missing"
                        + " from every nested Node in the value's bytes");

        // a list inside the record is recursive, the record is not: appending is exact
        String holder = "{\"type\":\"record\",\"name\":\"Holder\",\"namespace\":\"t\",\"fields\":[{\"name\":\"head\",\"type\":" + node + "}]}";
        Evolution evolution = AvroEvolution.evolve(holder, "id", OnExistingField.REJECT);
        Schema input = new Schema.Parser().parse(holder);
        Schema nodeType = input.getField("head").schema();
        GenericRecord second = new GenericData.Record(nodeType);
        second.put("v", 2);
        GenericRecord first = new GenericData.Record(nodeType);
        first.put("v", 1);
        first.put("next", second);
        GenericRecord value = new GenericData.Record(input);
        value.put("head", first);
        byte[] stamped = Stamping.avro(holder, INPUT_ID, evolution, "id", OUTPUT_ID).stamp(framed(INPUT_ID, encode(input, value)), 77L);
        GenericRecord read = decodeWhole(new Schema.Parser().parse(evolution.schema()), stamped);
        assertThat(read.get("id")).isEqualTo(77L);
        assertThat(((GenericRecord) ((GenericRecord) read.get("head")).get("next")).get("v")).isEqualTo(2);
    }

    /** A framed value of {@link #withIdField}'s long version: name "x", id 5. */
    private static byte[] valueWithId5(String schema) throws IOException {
        Schema input = new Schema.Parser().parse(schema);
        GenericRecord record = new GenericData.Record(input);
        record.put("name", "x");
        record.put("id", 5L);
        return framed(INPUT_ID, encode(input, record));
    }

    private static String withIdField(String type) {
        return "{\"type\":\"record\",\"name\":\"E\",\"fields\":[{\"name\":\"name\",\"type\":\"string\"},"
                + "{\"name\":\"id\",\"type\":\"" + type + "\"}]}";
    }

    private static boolean compatible(Schema reader, Schema writer) {
        return SchemaCompatibility.checkReaderWriterCompatibility(reader, writer).getType()
                == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE;
    }

    static GenericRecord sampleOrder(Schema schema) {
        GenericRecord order = new GenericData.Record(schema);
        order.put("customer", "Ann Lee");
        order.put("quantity", 3);
        order.put("placed", 1_700_000_000_000L);
        order.put("note", "leave at the door");
        order.put("status", new GenericData.EnumSymbol(schema.getField("status").schema(), "PAID"));
        Schema lineSchema = schema.getField("lines").schema().getElementType();
        GenericRecord line = new GenericData.Record(lineSchema);
        line.put("sku", "A-1");
        line.put("price", 9.5);
        order.put("lines", new GenericData.Array<>(schema.getField("lines").schema(), List.of(line, line)));
        order.put("tags", Map.of("a", 1));
        order.put("digest", new GenericData.Fixed(schema.getField("digest").schema(), new byte[] {1, 2, 3, 4}));
        order.put("raw", ByteBuffer.wrap(new byte[] {9, 8}));
        return order;
    }

    static byte[] encode(Schema schema, GenericRecord record) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(schema).write(record, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    static byte[] framed(int schemaId, byte[] payload) {
        return ByteBuffer.allocate(5 + payload.length).put((byte) 0).putInt(schemaId).put(payload).array();
    }

    /** Decodes the payload with Avro's reader and checks that the record takes every byte. */
    static GenericRecord decodeWhole(Schema schema, byte[] framed) throws IOException {
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(framed, 5, framed.length - 5, null);
        GenericRecord record = new GenericDatumReader<GenericRecord>(schema).read(null, decoder);
        assertThat(decoder.isEnd()).as("every byte read").isTrue();
        return record;
    }
}
