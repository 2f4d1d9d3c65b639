package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.squareup.wire.schema.internal.parser.FieldElement;
import com.squareup.wire.schema.internal.parser.MessageElement;
import com.squareup.wire.schema.internal.parser.OneOfElement;
import com.squareup.wire.schema.internal.parser.ProtoFileElement;
import com.squareup.wire.schema.internal.parser.ReservedElement;
import com.squareup.wire.schema.internal.parser.TypeElement;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Protobuf values stamped without decoding, judged by protobuf-java's {@link DynamicMessage} with a
 * descriptor of the output schema built here by hand, and the output schema's text read back by Wire.
 */
class ProtobufStampingTest {
    private static final String ORDERS = """
            syntax = "proto3";
            package acme;

            // an order
            message Order {
              string customer = 1;
              int32 quantity = 2;
              repeated Line lines = 3;
              reserved 5, 8 to 10;
              reserved "old";
              oneof pay {
                string card = 4;
                string iban = 12;
              }
              message Line {
                string sku = 1;
                double price = 2;
              }
            }
            enum Status { NEW = 0; }
            message Refund {
              int64 order_id = 1;
              string reason = 2;
            }
            """;
    private static final long ID = 912_099_150_311_464_960L;
    private static final int OUTPUT_ID = 0x0A0B0C0D;

    @Test
    void shouldAppendTheFieldSoThatProtobufReadsEveryFieldAndTheId() throws Exception {
        Evolution evolution = ProtobufEvolution.evolve(ORDERS, new int[] {0}, "id", 0, OnExistingField.REJECT);
        assertThat(evolution.fieldNumber()).as("the default, far above the producer's next number").isEqualTo(2047);

        DynamicMessage order = sampleOrder(descriptors(false).findMessageTypeByName("Order"));
        byte[] stamped = Stamping.protobuf(7, evolution, OUTPUT_ID).stamp(framed(7, new byte[] {0}, order.toByteArray()), ID);

        assertThat(stamped[0]).isZero();
        assertThat(ByteBuffer.wrap(stamped, 1, 4).getInt()).isEqualTo(OUTPUT_ID);
        assertThat(stamped[5]).as("message indexes kept").isZero();
        Descriptor output = descriptors(true).findMessageTypeByName("Order");
        DynamicMessage read = DynamicMessage.parseFrom(output, Arrays.copyOfRange(stamped, 6, stamped.length));
        assertThat(read.getUnknownFields().asMap()).isEmpty();
        assertThat(read.getField(output.findFieldByName("id"))).isEqualTo(ID);
        for (Descriptors.FieldDescriptor field : order.getDescriptorForType().getFields()) {
            assertThat(read.getField(output.findFieldByName(field.getName())).toString()).as(field.getName())
                    .isEqualTo(order.getField(field).toString());
        }
    }

    @Test
    void shouldDeclareTheFieldInTheMessageTheIndexesNameAndKeepTheRest() {
        ProtoFileElement output = ProtobufEvolution.parse(
                ProtobufEvolution.evolve(ORDERS, new int[] {0}, "id", 0, OnExistingField.REJECT).schema());
        ProtoFileElement input = ProtobufEvolution.parse(ORDERS);

        MessageElement order = (MessageElement) output.getTypes().get(0);
        FieldElement id = order.getFields().get(order.getFields().size() - 1);
        assertThat(id.getName()).isEqualTo("id");
        assertThat(id.getType()).isEqualTo("int64");
        assertThat(id.getTag()).isEqualTo(2047);
        assertThat(id.getLabel()).as("proto3: no label").isNull();
        MessageElement inputOrder = (MessageElement) input.getTypes().get(0);
        // as printed text: the elements' source locations differ between the two files
        assertThat(order.getFields().subList(0, order.getFields().size() - 1)).extracting(FieldElement::toSchema)
                .isEqualTo(inputOrder.getFields().stream().map(FieldElement::toSchema).toList());
        assertThat(order.getOneOfs()).extracting(OneOfElement::toSchema)
                .isEqualTo(inputOrder.getOneOfs().stream().map(OneOfElement::toSchema).toList());
        assertThat(order.getReserveds()).extracting(ReservedElement::toSchema)
                .isEqualTo(inputOrder.getReserveds().stream().map(ReservedElement::toSchema).toList());
        assertThat(output.getTypes().get(1).toSchema()).as("the enum").isEqualTo(input.getTypes().get(1).toSchema());
        assertThat(((MessageElement) output.getTypes().get(2)).getFields()).as("every message of the file: one output per file")
                .extracting(FieldElement::getName).containsExactly("order_id", "reason", "id");
        assertThat(output.getPackageName()).isEqualTo("acme");
    }

    @Test
    void shouldFindNestedMessagesAndCountOnlyMessages() throws Exception {
        Evolution line = ProtobufEvolution.evolve(ORDERS, new int[] {0, 0}, "id", 0, OnExistingField.REJECT);
        assertThat(line.fieldNumber()).isEqualTo(2047);
        assertThat(line.fullName()).isEqualTo("acme.Order.Line");
        MessageElement order = (MessageElement) ProtobufEvolution.parse(line.schema()).getTypes().get(0);
        MessageElement lineMessage = (MessageElement) order.getNestedTypes().get(0);
        assertThat(lineMessage.getFields()).extracting(FieldElement::getName).containsExactly("sku", "price", "id");
        assertThat(line.schema()).as("the same file whichever message a value is")
                .isEqualTo(ProtobufEvolution.evolve(ORDERS, new int[] {0}, "id", 0, OnExistingField.REJECT).schema());

        Evolution refund = ProtobufEvolution.evolve(ORDERS, new int[] {1}, "id", 0, OnExistingField.REJECT);
        assertThat(refund.fullName()).as("the enum between them is not a message").isEqualTo("acme.Refund");
        Descriptor refundType = descriptors(false).findMessageTypeByName("Refund");
        DynamicMessage value = DynamicMessage.newBuilder(refundType).setField(refundType.findFieldByName("order_id"), 5L).build();
        byte[] stamped = Stamping.protobuf(7, refund, OUTPUT_ID).stamp(framed(7, new byte[] {2, 2}, value.toByteArray()), ID);
        DynamicMessage read = DynamicMessage.parseFrom(refundType, Arrays.copyOfRange(stamped, 7, stamped.length));
        assertThat(read.getUnknownFields().getField(2047).getVarintList()).containsExactly(ID);
        assertThat(read.getField(refundType.findFieldByName("order_id"))).isEqualTo(5L);
    }

    @Test
    void shouldRefuseIndexesThatNameNoMessage() {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve(ORDERS, new int[] {2}, "id", 0, OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.BAD_MESSAGE_INDEXES);
        assertThat(refused.getMessage()).isEqualTo("message indexes [2] name no message of the value's Protobuf schema");
    }

    @Test
    void shouldUseAConfiguredNumberUnlessItIsUsedOrReserved() {
        assertThat(ProtobufEvolution.evolve(ORDERS, new int[] {0}, "id", 20, OnExistingField.REJECT).fieldNumber()).isEqualTo(20);
        for (int taken : new int[] {1, 4, 5, 9, 12}) {
            BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                    () -> ProtobufEvolution.evolve(ORDERS, new int[] {0}, "id", taken, OnExistingField.REJECT));
            assertThat(refused.code()).as("number %d", taken).isEqualTo(Code.FIELD_NUMBER_TAKEN);
            assertThat(refused.getMessage()).contains("field number " + taken + " is already used or reserved in Protobuf message Order");
        }
    }

    @Test
    void shouldRefuseAReservedNameAndAnExistingFieldUnderReject() {
        BadRecordException reserved = catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve(ORDERS, new int[] {0}, "old", 0, OnExistingField.REJECT));
        assertThat(reserved.getMessage()).isEqualTo("field name 'old' is reserved in Protobuf message Order");
        BadRecordException existing = catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve(ORDERS, new int[] {0}, "card", 0, OnExistingField.REJECT));
        assertThat(existing.code()).isEqualTo(Code.FIELD_EXISTS);
        assertThat(existing.getMessage()).isEqualTo("field 'card' already exists in Protobuf message Order (stamp.on-existing-field=reject)");
    }

    @Test
    void shouldOverwriteAnInt64FieldByAppendingItAgain() throws Exception {
        Evolution evolution = ProtobufEvolution.evolve(ORDERS, new int[] {1}, "order_id", 0, OnExistingField.OVERWRITE);
        assertThat(evolution.kind()).isEqualTo(Evolution.Kind.APPEND);
        assertThat(evolution.schema()).as("Order, which has no such field, gets one").contains("int64 order_id = 2047;");
        Descriptor refund = descriptors(false).findMessageTypeByName("Refund");
        DynamicMessage value = DynamicMessage.newBuilder(refund).setField(refund.findFieldByName("order_id"), 5L)
                .setField(refund.findFieldByName("reason"), "late").build();

        byte[] stamped = Stamping.protobuf(7, evolution, OUTPUT_ID).stamp(framed(7, new byte[] {2, 2}, value.toByteArray()), ID);

        DynamicMessage read = DynamicMessage.parseFrom(refund, Arrays.copyOfRange(stamped, 7, stamped.length));
        assertThat(read.getField(refund.findFieldByName("order_id"))).as("the last value wins").isEqualTo(ID);
        assertThat(read.getField(refund.findFieldByName("reason"))).isEqualTo("late");

        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve(ORDERS, new int[] {1}, "reason", 0, OnExistingField.OVERWRITE));
        assertThat(refused.getMessage()).isEqualTo("field 'reason' already exists in Protobuf message Refund as string,"
                + " which an ID (int64) cannot overwrite");
    }

    /**
     * schema-registry.md: {@code overwrite} appends the ID only over a singular {@code int64}/{@code uint64} field; a
     * repeated one would gain the ID as one more element (no last value wins), so it is {@code field-exists}.
     */
    @Test
    void shouldOverwriteOnlyASingularInt64OrUint64Field() {
        String schema = """
                syntax = "proto3";
                message Event {
                  uint64 uid = 1;
                  repeated int64 ids = 2;
                  repeated uint64 uids = 3;
                  int32 small = 4;
                }
                """;
        assertThat(ProtobufEvolution.evolve(schema, new int[] {0}, "uid", 0, OnExistingField.OVERWRITE).kind())
                .as("a singular uint64").isEqualTo(Evolution.Kind.APPEND);
        for (String field : new String[] {"ids", "uids"}) {
            BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                    () -> ProtobufEvolution.evolve(schema, new int[] {0}, field, 0, OnExistingField.OVERWRITE));
            assertThat(refused.code()).as(field).isEqualTo(Code.FIELD_EXISTS);
            assertThat(refused.getMessage()).isEqualTo("field '" + field + "' already exists in Protobuf message Event as repeated "
                    + (field.equals("ids") ? "int64" : "uint64") + ", which an ID (int64) cannot overwrite");
        }
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve(schema, new int[] {0}, "small", 0, OnExistingField.OVERWRITE)).code())
                .as("int32: the ID does not fit").isEqualTo(Code.FIELD_EXISTS);
    }

    @Test
    void shouldKeepAValueWithTheFieldUnderKeep() {
        Evolution evolution = ProtobufEvolution.evolve(ORDERS, new int[] {1}, "reason", 0, OnExistingField.KEEP);
        byte[] value = framed(7, new byte[] {2, 2}, new byte[] {8, 5});
        byte[] stamped = Stamping.protobuf(7, evolution, OUTPUT_ID).stamp(value, ID);
        assertThat(Arrays.copyOfRange(stamped, 5, stamped.length)).isEqualTo(Arrays.copyOfRange(value, 5, value.length));
        assertThat(ByteBuffer.wrap(stamped, 1, 4).getInt()).isEqualTo(OUTPUT_ID);
    }

    @Test
    void shouldSkipTheNumbersProtobufKeepsAndLabelProto2FieldsOptional() {
        String proto2 = "syntax = \"proto2\";\nmessage M {\n  optional string a = 18999;\n  reserved 1 to 2047;\n}\n";
        Evolution evolution = ProtobufEvolution.evolve(proto2, new int[] {0}, "id", 0, OnExistingField.REJECT);
        assertThat(evolution.fieldNumber()).isEqualTo(20_000);
        assertThat(evolution.schema()).contains("optional int64 id = 20000;");
        String high = "syntax = \"proto3\";\nmessage M {\n  string a = 2047;\n  reserved 2000 to 2045;\n}\n";
        assertThat(ProtobufEvolution.evolve(high, new int[] {0}, "id", 0, OnExistingField.REJECT).fieldNumber())
                .as("the highest free number below the default").isEqualTo(2046);

        String full = "syntax = \"proto3\";\nmessage M {\n  reserved 2 to max;\n  string a = 1;\n}\n";
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve(full, new int[] {0}, "id", 0, OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.FIELD_NUMBER_TAKEN);
    }

    @Test
    void shouldRefuseSchemaTextThatDoesNotParse() {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                () -> ProtobufEvolution.evolve("message {", new int[] {0}, "id", 0, OnExistingField.REJECT));
        assertThat(refused.code()).isEqualTo(Code.INVALID_SCHEMA);
    }

    /** The file above as protobuf-java describes it, with (withId) or without Order's field {@code int64 id = 2047}. */
    private static Descriptors.FileDescriptor descriptors(boolean withId) throws Descriptors.DescriptorValidationException {
        DescriptorProto line = DescriptorProto.newBuilder().setName("Line")
                .addField(field("sku", 1, Type.TYPE_STRING)).addField(field("price", 2, Type.TYPE_DOUBLE)).build();
        DescriptorProto.Builder order = DescriptorProto.newBuilder().setName("Order")
                .addField(field("customer", 1, Type.TYPE_STRING))
                .addField(field("quantity", 2, Type.TYPE_INT32))
                .addField(field("lines", 3, Type.TYPE_MESSAGE).toBuilder().setLabel(Label.LABEL_REPEATED).setTypeName(".acme.Order.Line"))
                .addField(field("card", 4, Type.TYPE_STRING).toBuilder().setOneofIndex(0))
                .addField(field("iban", 12, Type.TYPE_STRING).toBuilder().setOneofIndex(0))
                .addOneofDecl(OneofDescriptorProto.newBuilder().setName("pay"))
                .addNestedType(line);
        if (withId) {
            order.addField(field("id", 2047, Type.TYPE_INT64));
        }
        DescriptorProto refund = DescriptorProto.newBuilder().setName("Refund")
                .addField(field("order_id", 1, Type.TYPE_INT64)).addField(field("reason", 2, Type.TYPE_STRING)).build();
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("orders.proto").setPackage("acme").setSyntax("proto3")
                .addMessageType(order).addMessageType(refund).build();
        return Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[0]);
    }

    private static FieldDescriptorProto field(String name, int number, Type type) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type).setLabel(Label.LABEL_OPTIONAL).build();
    }

    private static DynamicMessage sampleOrder(Descriptor order) {
        Descriptor line = order.findNestedTypeByName("Line");
        DynamicMessage oneLine = DynamicMessage.newBuilder(line).setField(line.findFieldByName("sku"), "A-1")
                .setField(line.findFieldByName("price"), 9.5).build();
        return DynamicMessage.newBuilder(order).setField(order.findFieldByName("customer"), "Ann Lee")
                .setField(order.findFieldByName("quantity"), 3)
                .addRepeatedField(order.findFieldByName("lines"), oneLine)
                .addRepeatedField(order.findFieldByName("lines"), oneLine)
                .setField(order.findFieldByName("iban"), "DE00 1234").build();
    }

    static byte[] framed(int schemaId, byte[] indexes, byte[] payload) {
        return ByteBuffer.allocate(5 + indexes.length + payload.length).put((byte) 0).putInt(schemaId).put(indexes).put(payload).array();
    }
}
