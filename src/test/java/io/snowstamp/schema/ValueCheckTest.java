package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import io.snowstamp.config.StampSettings.OnExistingField;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * The walk that checks a value against its writer schema before it is stamped: Apache Avro's and
 * protobuf-java's own encoders make the values, and each broken one is refused with {@code invalid-value}.
 */
class ValueCheckTest {
    private static final String ORDER = """
            {"type": "record", "name": "Order", "namespace": "com.acme", "fields": [
               {"name": "customer", "type": "string"},
               {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
               {"name": "note", "type": ["null", "string"]},
               {"name": "lines", "type": {"type": "array", "items": "long"}},
               {"name": "tags", "type": {"type": "map", "values": "int"}},
               {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 2}},
               {"name": "price", "type": "double"}
             ]}""";
    private static final String PROTO = "syntax = \"proto3\";\nmessage Order {\n  string customer = 1;\n  int64 total = 2;\n}\n";

    @Test
    void shouldPassEveryValueAvroWritesAndRefuseOneByteMoreOrLess() throws IOException {
        Stamping stamping = avro();
        byte[] valid = AvroStampingTest.framed(7, AvroStampingTest.encode(new Schema.Parser().parse(ORDER), order()));

        stamping.check(valid);

        assertInvalid(stamping, Arrays.copyOf(valid, valid.length + 1), "bytes are left over");
        for (int cut = 5; cut < valid.length; cut++) {
            assertInvalid(stamping, Arrays.copyOf(valid, cut), "");
        }
    }

    @Test
    void shouldRefuseWhatAvroReadersRefuseAndItsSkipLetsThrough() {
        Stamping stamping = avro(
                "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}},"
                        + "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},{\"name\":\"s\",\"type\":\"string\"}]}");
        stamping.check(AvroStampingTest.framed(7, new byte[] {0, 2, 4, 2, 'x'}));     // A, the long 2, "x"

        assertInvalid(stamping, AvroStampingTest.framed(7, new byte[] {2, 0, 0}), "enum symbol 1 of 1");
        assertInvalid(stamping, AvroStampingTest.framed(7, new byte[] {0, 4, 0}), "union branch 2");
        assertInvalid(stamping, AvroStampingTest.framed(7, new byte[] {0, 0, 1}), "negative length");
    }

    @Test
    void shouldWalkTextFieldsInARowAsOneAtATime() throws IOException {
        String schema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"},{\"name\":\"b\",\"type\":\"string\"},"
                + "{\"name\":\"c\",\"type\":\"bytes\"},{\"name\":\"d\",\"type\":\"string\"}]}";
        Stamping stamping = avro(schema);
        GenericRecord record = new GenericData.Record(new Schema.Parser().parse(schema));
        record.put("a", "x");
        record.put("b", "y".repeat(100));       // a length of two bytes amid one-byte ones
        record.put("c", java.nio.ByteBuffer.wrap(new byte[0]));
        record.put("d", "z".repeat(63));        // the longest length of one byte
        byte[] valid = AvroStampingTest.framed(7, AvroStampingTest.encode(record.getSchema(), record));

        stamping.check(valid);

        assertInvalid(stamping, Arrays.copyOf(valid, valid.length + 1), "bytes are left over");
        for (int cut = 5; cut < valid.length; cut++) {
            assertInvalid(stamping, Arrays.copyOf(valid, cut), "cut off");
        }
        assertInvalid(stamping, AvroStampingTest.framed(7, new byte[] {2, 'x', 3, 0, 0}), "negative length -2");
        assertInvalid(stamping, AvroStampingTest.framed(7, new byte[] {0, 0, 0, 4, 'z'}), "cut off");
        stamping.check(AvroStampingTest.framed(7, new byte[] {0, 0, 0, 2, 'z'}));
    }

    @Test
    void shouldPassEveryMessageProtobufWritesAndRefuseACutOrBrokenOne() throws IOException {
        Stamping stamping = protobuf(OnExistingField.REJECT);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeString(1, "Ann");
        out.writeInt64(2, 912_099_150_311_464_960L);
        out.writeBytes(17, ByteString.copyFromUtf8("an unknown field is skipped"));
        out.flush();
        byte[] valid = ProtobufStampingTest.framed(7, new byte[] {0}, bytes.toByteArray());

        stamping.check(valid);

        assertInvalid(stamping, Arrays.copyOf(valid, valid.length - 1), "truncated");
        assertInvalid(stamping, Arrays.copyOf(valid, valid.length + 1), "");     // a trailing 0: a tag of field 0
        assertInvalid(stamping, ProtobufStampingTest.framed(7, new byte[] {0}, new byte[] {(byte) 0x0F}), "");  // wire type 7
        assertInvalid(stamping, ProtobufStampingTest.framed(7, new byte[] {0}, new byte[] {0x0C}), "end-group");
    }

    @Test
    void shouldRefuseTheIdsOwnNumberUnderAnotherWireType() {
        Stamping stamping = protobuf(OnExistingField.REJECT);     // int64 id = 2047: tag 2047 << 3
        stamping.check(ProtobufStampingTest.framed(7, new byte[] {0}, new byte[] {(byte) 0xF8, 0x7F, 5}));    // varint 5

        assertInvalid(stamping, ProtobufStampingTest.framed(7, new byte[] {0}, new byte[] {(byte) 0xFA, 0x7F, 1, 'x'}), "field 2047");
        // keep: the message's own field of that name, a string, is no ID and stays as it is
        Stamping kept = Stamping.protobuf(7, ProtobufEvolution.evolve(PROTO, new int[] {0}, "customer", 0, OnExistingField.KEEP), 8);
        kept.check(ProtobufStampingTest.framed(7, new byte[] {0}, new byte[] {10, 1, 'x'}));
    }

    private static GenericRecord order() {
        Schema schema = new Schema.Parser().parse(ORDER);
        GenericRecord order = new GenericData.Record(schema);
        order.put("customer", "Ann");
        order.put("status", new GenericData.EnumSymbol(schema.getField("status").schema(), "PAID"));
        order.put("note", "fragile");
        order.put("lines", Arrays.asList(1L, -300L, Long.MAX_VALUE));
        order.put("tags", java.util.Map.of("a", 1, "b", -2));
        order.put("digest", new GenericData.Fixed(schema.getField("digest").schema(), new byte[] {1, 2}));
        order.put("price", 9.5);
        return order;
    }

    /**
     * What Apache Avro's reader (1.12) refuses or reads, found by a review: counts past its collection limit and a
     * negative block byte-size refused with {@code invalid-value} (the first escaped as a crash), enum symbols and union
     * branches read as Avro reads an int (its bits past 32 dropped), each as Avro's own reader answers.
     */
    @Test
    void shouldAnswerCollectionLimitsBlockSizesAndIndexesAsAvrosReaderDoes() {
        String ints = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"int\"}}]}";
        String map = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"int\"}}]}";
        byte[] huge = new byte[11];
        int end = Varints.write(Varints.zigZag(2_147_483_640L), huge, 0);
        for (byte[] payload : new byte[][] {Arrays.copyOf(huge, end + 1), {1, 1, 2, 0}}) {
            assertBothRefuse(ints, payload);
        }
        assertBothRefuse(map, new byte[] {1, 1, 2, 'k', 2, 0});

        String enumSchema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}}]}";
        String union = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"u\",\"type\":[\"null\",\"long\"]}]}";
        byte[] b = {(byte) 0x82, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10};
        assertBothRead(enumSchema, b, "B");
        assertBothRead(union, new byte[] {(byte) 0x82, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10, 2}, 1L);
        assertBothRead(union, new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10}, null);
    }

    /** Items that take no byte (null) count across the whole value, as Avro's reader counts them; none is walked one by one. */
    @Test
    void shouldBoundItemsOfNoByteAcrossTheValueAsAvrosReaderDoes() {
        long limit = collectionAllocationLimit();
        String nulls = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"null\"}},"
                + "{\"name\":\"b\",\"type\":{\"type\":\"array\",\"items\":\"null\"}}]}";
        byte[] half = new byte[10];
        int size = Varints.write(Varints.zigZag(limit / 2 + 1), half, 0);
        java.io.ByteArrayOutputStream one = new java.io.ByteArrayOutputStream();
        one.write(half, 0, size);
        one.write(0);
        one.write(0);       // the second array empty
        avro(nulls).check(AvroStampingTest.framed(7, one.toByteArray()));      // (Avro's reader would allocate them all)
        java.io.ByteArrayOutputStream two = new java.io.ByteArrayOutputStream();
        two.write(half, 0, size);
        two.write(0);
        two.write(half, 0, size);
        two.write(0);
        assertBothRefuse(nulls, two.toByteArray());

        // an item of no byte that can have no value: a record that holds itself with no way out
        String loop = "{\"type\":\"record\",\"name\":\"Top\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":"
                + "{\"type\":\"record\",\"name\":\"Loop\",\"fields\":[{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"again\",\"type\":\"Loop\"}]}}}]}";
        assertBothRefuse(loop, new byte[] {2, 0});
        avro(loop).check(AvroStampingTest.framed(7, new byte[] {0}));       // no item: a value
    }

    /**
     * Overwrite mode does not decode: a recursive value the walk follows, nested past what Avro's reader can follow on a
     * small stack, is stamped in place as the other modes stamp it (schema-registry.md: not checked).
     */
    @Test
    void shouldOverwriteAValueNestedTooDeepToDecodeInPlace() throws Exception {
        String node = "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
                + "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";
        Stamping stamping = Stamping.avro(node, 7, AvroEvolution.evolve(node, "id", OnExistingField.OVERWRITE), "id", 8);
        java.io.ByteArrayOutputStream deep = new java.io.ByteArrayOutputStream();
        for (int n = 0; n < 3_000; n++) {      // within the walk's reach on this stack (a frame a level), past the reader's
            deep.write(0);      // id 0
            deep.write(2);      // the next Node
        }
        deep.write(0);
        deep.write(0);
        byte[] value = AvroStampingTest.framed(7, deep.toByteArray());
        Object[] outcome = new Object[1];
        Thread small = new Thread(null, () -> {
            stamping.check(value);
            outcome[0] = stamping.stamp(value, 5L);
        }, "one-megabyte-stack", 1024 * 1024);
        small.start();
        small.join();
        byte[] stamped = (byte[]) outcome[0];
        assertThat(stamped).hasSize(value.length);
        assertThat(stamped[5]).as("the top record's id: 5 as a zig-zag varint").isEqualTo((byte) 10);
        assertThat(java.util.Arrays.copyOfRange(stamped, 6, stamped.length)).isEqualTo(java.util.Arrays.copyOfRange(value, 6, value.length));
    }

    /** Which element types take no byte, as Avro's reader tells them (its allocation bound counts their items). */
    @Test
    void shouldTellTheTypesOfNoByteAsAvroDoes() {
        for (String schema : new String[] {"\"null\"", "\"int\"", "{\"type\":\"fixed\",\"name\":\"F0\",\"size\":0}",
            "{\"type\":\"fixed\",\"name\":\"F1\",\"size\":1}", "[\"null\"]",
            "{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"a\",\"type\":\"null\"}]}",
            "{\"type\":\"record\",\"name\":\"E\",\"fields\":[]}",
            "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"again\",\"type\":\"L\"}]}",
            "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"b\",\"type\":{\"type\":\"record\",\"name\":\"B\","
                    + "\"fields\":[{\"name\":\"a\",\"type\":\"A\"}]}}]}",
            "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"b\",\"type\":{\"type\":\"record\",\"name\":\"B\","
                    + "\"fields\":[{\"name\":\"a\",\"type\":\"A\"},{\"name\":\"x\",\"type\":\"int\"}]}}]}",
            "{\"type\":\"record\",\"name\":\"S\",\"fields\":[{\"name\":\"one\",\"type\":{\"type\":\"record\",\"name\":\"T\","
                    + "\"fields\":[{\"name\":\"n\",\"type\":\"null\"}]}},{\"name\":\"two\",\"type\":\"T\"},{\"name\":\"s\",\"type\":\"string\"}]}"}) {
            Schema parsed = new Schema.Parser().parse(schema);
            assertThat(AvroValueCheck.zeroBytes(parsed, java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>())))
                    .as(schema).isEqualTo(org.apache.avro.generic.GenericDatumReader.isZeroByteSchema(parsed));
        }
    }

    /**
     * A record whose two fields share the next record, forty deep, ending in a null: Avro's own test of no byte looks at
     * the last one along each of 2^40 paths; the check looks at each record once (the second review's schema).
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 30, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldCompileARecordSharedAlongManyPathsOnce() {
        StringBuilder schema = new StringBuilder();
        int depth = 40;
        for (int n = 0; n < depth; n++) {
            schema.append("{\"type\":\"record\",\"name\":\"R").append(n).append("\",\"fields\":[{\"name\":\"a\",\"type\":");
        }
        schema.append("\"null\"");
        for (int n = depth - 1; n >= 0; n--) {
            schema.append("},{\"name\":\"b\",\"type\":").append(n == depth - 1 ? "\"null\"" : "\"R" + (n + 1) + "\"").append("}]}");
        }
        String top = "{\"type\":\"record\",\"name\":\"Top\",\"fields\":[{\"name\":\"items\",\"type\":{\"type\":\"array\",\"items\":"
                + schema + "}}]}";

        Stamping stamping = avro(top);

        stamping.check(AvroStampingTest.framed(7, new byte[] {2, 0}));      // one item of no byte, then the end
    }

    private static void assertBothRefuse(String schema, byte[] payload) {
        assertInvalid(avro(schema), AvroStampingTest.framed(7, payload), "");
        assertThat(catchThrowable(() -> avroRead(schema, payload))).as("Avro's reader refuses it too").isNotNull();
    }

    private static void assertBothRead(String schema, byte[] payload, Object first) {
        avro(schema).check(AvroStampingTest.framed(7, payload));
        try {
            Object read = avroRead(schema, payload).get(0);
            assertThat(read == null ? null : read instanceof Long ? read : read.toString()).isEqualTo(first);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The payload read whole by Apache Avro's own reader (nothing left over). */
    private static GenericRecord avroRead(String schema, byte[] payload) throws java.io.IOException {
        org.apache.avro.io.BinaryDecoder decoder = org.apache.avro.io.DecoderFactory.get().binaryDecoder(payload, null);
        GenericRecord record = new org.apache.avro.generic.GenericDatumReader<GenericRecord>(new Schema.Parser().parse(schema)).read(null, decoder);
        if (!decoder.isEnd()) {
            throw new java.io.IOException("bytes left over");
        }
        return record;
    }

    /** Avro's limit on items of no byte in one value, as this JVM's heap sets it (found by asking it). */
    private static long collectionAllocationLimit() {
        long low = 0;
        long high = Integer.MAX_VALUE;
        while (low < high) {
            long mid = (low + high + 1) / 2;
            if (catchThrowable(() -> org.apache.avro.SystemLimitException.checkMaxCollectionAllocation(mid)) == null) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    private static Stamping avro() {
        return avro(ORDER);
    }

    private static Stamping avro(String schema) {
        return Stamping.avro(schema, 7, AvroEvolution.evolve(schema, "id", OnExistingField.REJECT), "id", 8);
    }

    private static Stamping protobuf(OnExistingField onExisting) {
        return Stamping.protobuf(7, ProtobufEvolution.evolve(PROTO, new int[] {0}, "id", 0, onExisting), 8);
    }

    private static void assertInvalid(Stamping stamping, byte[] value, String reason) {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> stamping.check(value));
        assertThat(refused).as("refused: " + Arrays.toString(value)).isNotNull();
        assertThat(refused.code()).isEqualTo(Code.INVALID_VALUE);
        assertThat(refused.getMessage()).contains(reason);
    }
}
