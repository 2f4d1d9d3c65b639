package io.snowstamp.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.config.SchemaRegistrySettings;
import io.snowstamp.config.SchemaRegistrySettings.SubjectStrategy;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.HeaderFormat;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.config.StampSettings.ValueFormat;
import io.snowstamp.schema.HttpSchemaRegistry;
import io.snowstamp.BadRecordException;
import io.snowstamp.schema.SchemaStamper;
import io.snowstamp.schema.Stamping;
import io.snowstamp.testing.ApicurioRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The registry client and the output schemas against a real schema registry (Apicurio's server, its
 * Confluent-compatible API): an input subject evolving through three versions under BACKWARD, each
 * output schema registered in an output subject that is BACKWARD too, every stamped value read by
 * Apache Avro's reader with the schema the registry serves for the value's output ID.
 */
@Tag("integration")
@Timeout(300)
class SchemaRegistryIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] VERSIONS = {
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"}]}",
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"},"
                + "{\"name\":\"quantity\",\"type\":\"int\",\"default\":1}]}",
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"},"
                + "{\"name\":\"quantity\",\"type\":\"int\",\"default\":1},{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null}]}"};

    private static ApicurioRegistry registry;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = ApicurioRegistry.start();
    }

    @AfterAll
    static void stopRegistry() throws Exception {
        if (registry != null) {
            registry.close();
        }
    }

    @Test
    void shouldEvolveTheOutputSubjectWithTheInputThroughThreeVersions() throws Exception {
        String topic = "orders-" + System.nanoTime();
        compatibility(topic + "-in-value", "BACKWARD");
        compatibility(topic + "-value", "BACKWARD");
        SchemaStamper stamper = stamper(ValueFormat.AVRO, topic, OnExistingField.REJECT);

        for (int version = 0; version < VERSIONS.length; version++) {
            int inputId = register(topic + "-in-value", VERSIONS[version]);
            Schema input = new Schema.Parser().parse(VERSIONS[version]);
            GenericRecord order = new GenericData.Record(input);
            for (Schema.Field field : input.getFields()) {
                order.put(field.name(), field.name().equals("customer") ? "customer " + version
                        : field.name().equals("quantity") ? 7 + version : "note " + version);
            }
            long id = 912_099_150_311_464_960L + version;

            Stamping stamping = stamper.inspect(framed(inputId, order));
            byte[] stamped = stamping.stamp(framed(inputId, order), id);

            int outputId = ByteBuffer.wrap(stamped, 1, 4).getInt();
            Schema output = new Schema.Parser().parse(schemaById(outputId));
            GenericRecord read = decodeWhole(output, stamped);
            assertThat(read.get("id")).isEqualTo(id);
            assertThat(read.get("customer").toString()).isEqualTo("customer " + version);
            assertThat(output.getFields()).hasSize(input.getFields().size() + 1);
        }
        JsonNode versions = JSON.readTree(registry.call("GET", "/subjects/" + topic + "-value/versions", null).body());
        assertThat(versions).as("one output version per input version").hasSize(3);
    }

    @Test
    void shouldRegisterTheSameOutputOnceAndRefuseAnUnknownIdAndARecordlessSchema() throws Exception {
        String topic = "ids-" + System.nanoTime();
        SchemaStamper stamper = stamper(ValueFormat.AVRO, topic, OnExistingField.REJECT);
        int inputId = register(topic + "-in-value", VERSIONS[0]);
        Schema input = new Schema.Parser().parse(VERSIONS[0]);
        GenericRecord order = new GenericData.Record(input);
        order.put("customer", "x");

        int first = stamper.inspect(framed(inputId, order)).outputId();
        int again = stamper(ValueFormat.AVRO, topic, OnExistingField.REJECT).inspect(framed(inputId, order)).outputId();

        assertThat(again).as("a second instance finds the same output schema").isEqualTo(first);
        BadRecordException unknown = catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(new byte[] {0, 0x7F, 0, 0, 1, 2}));
        assertThat(unknown.code()).isEqualTo(BadRecordException.Code.UNKNOWN_SCHEMA);
        int primitive = register(topic + "-prim-value", "\"string\"");
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(new byte[] {0, 0, 0, 0, (byte) primitive, 0})).code()).isEqualTo(BadRecordException.Code.NOT_RECORD);
    }

    @Test
    void shouldRegisterTheProtobufOutputSchema() throws Exception {
        String topic = "proto-" + System.nanoTime();
        String proto = "syntax = \"proto3\";\npackage acme;\n\nmessage Order {\n  string customer = 1;\n  int32 quantity = 2;\n}\n";
        int inputId = register(topic + "-in-value", proto, "PROTOBUF");
        SchemaStamper stamper = stamper(ValueFormat.PROTOBUF, topic, OnExistingField.REJECT);
        byte[] value = {0, 0, 0, 0, (byte) inputId, 0, 10, 1, 'x'};

        byte[] stamped = stamper.inspect(value).stamp(value, 300L);

        JsonNode output = JSON.readTree(registry.call("GET", "/schemas/ids/" + ByteBuffer.wrap(stamped, 1, 4).getInt(), null).body());
        assertThat(output.path("schemaType").asText()).isEqualTo("PROTOBUF");
        assertThat(output.path("schema").asText()).contains("int64 id = 2047;");
        assertThat(stamped).endsWith((byte) 0xF8, 0x7F, (byte) 0xAC, 0x02);      // tag (2047 << 3 | 0), 300 as a varint
    }

    @Test
    void shouldKeepTheProtobufFieldNumberAsTheInputEvolvesUnderBackward() throws Exception {
        String topic = "users-" + System.nanoTime();
        compatibility(topic + "-in-value", "BACKWARD");
        compatibility(topic + "-value", "BACKWARD");
        SchemaStamper stamper = stamper(ValueFormat.PROTOBUF, topic, OnExistingField.REJECT, SubjectStrategy.TOPIC);
        int v1 = register(topic + "-in-value", "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n}\n", "PROTOBUF");
        int v2 = register(topic + "-in-value", "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n  string email = 2;\n}\n",
                "PROTOBUF");

        for (int input : new int[] {v1, v2}) {
            byte[] value = {0, 0, 0, 0, (byte) input, 0, 10, 1, 'x'};
            byte[] stamped = stamper.inspect(value).stamp(value, 300L);     // v2: refused as incompatible when the number moved
            assertThat(schemaById(ByteBuffer.wrap(stamped, 1, 4).getInt())).contains("int64 id = 2047;");
            assertThat(stamped).endsWith((byte) 0xF8, 0x7F, (byte) 0xAC, 0x02);
        }
        assertThat(JSON.readTree(registry.call("GET", "/subjects/" + topic + "-value/versions", null).body())).hasSize(2);
    }

    @Test
    void shouldRegisterOneOutputSchemaForEveryMessageOfAProtobufFileUnderBackward() throws Exception {
        String topic = "events-" + System.nanoTime();
        compatibility(topic + "-value", "BACKWARD");
        int input = register(topic + "-in-value", "syntax = \"proto3\";\npackage acme;\nmessage Created {\n  string name = 1;\n}\n"
                + "message Deleted {\n  int32 reason = 1;\n}\n", "PROTOBUF");
        SchemaStamper stamper = stamper(ValueFormat.PROTOBUF, topic, OnExistingField.REJECT, SubjectStrategy.TOPIC);

        int created = stamper.inspect(new byte[] {0, 0, 0, 0, (byte) input, 0}).outputId();
        int deleted = stamper.inspect(new byte[] {0, 0, 0, 0, (byte) input, 2, 2}).outputId();      // indexes [1]
        int createdAgain = stamper.inspect(new byte[] {0, 0, 0, 0, (byte) input, 0, 10, 1, 'y'}).outputId();

        assertThat(deleted).isEqualTo(created).isEqualTo(createdAgain);
        assertThat(JSON.readTree(registry.call("GET", "/subjects/" + topic + "-value/versions", null).body())).hasSize(1);
    }

    @Test
    void shouldRefuseValuesThatAreNotExactlyOneValueOfTheirSchemaAndRecursiveRecords() throws Exception {
        String topic = "checked-" + System.nanoTime();
        SchemaStamper stamper = stamper(ValueFormat.AVRO, topic, OnExistingField.REJECT, SubjectStrategy.TOPIC);
        int inputId = register(topic + "-in-value", VERSIONS[0]);
        GenericRecord order = new GenericData.Record(new Schema.Parser().parse(VERSIONS[0]));
        order.put("customer", "x");
        byte[] valid = framed(inputId, order);
        stamper.inspect(valid);

        for (byte[] broken : List.of(java.util.Arrays.copyOf(valid, valid.length + 1), java.util.Arrays.copyOf(valid, valid.length - 1))) {
            BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> stamper.inspect(broken));
            assertThat(refused).as("a byte more or less").isNotNull();
            assertThat(refused.code()).isEqualTo(BadRecordException.Code.INVALID_VALUE);
        }
        int node = register(topic + "-node-value", "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"
                + "{\"name\":\"next\",\"type\":[\"null\",\"Node\"],\"default\":null}]}");
        BadRecordException recursive = catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(new byte[] {0, 0, 0, 0, (byte) node, 2, 2, 4, 0}));     // 1 -> 2 -> null
        assertThat(recursive).as("a value whose output no reader could decode").isNotNull();
        assertThat(recursive.code()).isEqualTo(BadRecordException.Code.RECURSIVE_RECORD);
    }

    @Test
    void shouldNeverRegisterIntoTheProducersRecordNameSubject() throws Exception {
        String name = "rn" + System.nanoTime() + ".Thing";
        String thing = "{\"type\":\"record\",\"name\":\"" + name + "\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}";
        int inputId = register(name, thing);      // as a producer with RecordNameStrategy registers it
        SchemaStamper stamper = stamper(ValueFormat.AVRO, "things", OnExistingField.REJECT, SubjectStrategy.RECORD);

        int outputId = stamper.inspect(new byte[] {0, 0, 0, 0, (byte) inputId, 2, 'x'}).outputId();

        assertThat(JSON.readTree(registry.call("GET", "/subjects/" + name + "/versions", null).body())).as("the producer's subject")
                .hasSize(1);
        assertThat(JSON.readTree(registry.call("GET", "/subjects/" + name + "-stamped/versions/latest", null).body()).path("id").asInt())
                .isEqualTo(outputId);
    }

    @Test
    void shouldAskAgainForAnIdTheRegistryDidNotKnow() throws Exception {
        String topic = "late-" + System.nanoTime();
        SchemaStamper stamper = stamper(ValueFormat.AVRO, topic, OnExistingField.REJECT, SubjectStrategy.TOPIC);
        // schemas no other test registers: the registry gives each a new ID, in sequence
        String unique = "late" + System.nanoTime();
        int before = register(topic + "-a-value", VERSIONS[0].replace("com.acme", unique + ".a"));
        byte[] value = {0, 0, 0, 0, (byte) (before + 1), 2, 'x'};        // the ID the registry gives next
        assertThat(catchThrowableOfType(BadRecordException.class, () -> stamper.inspect(value)).code())
                .isEqualTo(BadRecordException.Code.UNKNOWN_SCHEMA);

        int late = register(topic + "-b-value", VERSIONS[0].replace("com.acme", unique + ".b"));
        org.junit.jupiter.api.Assumptions.assumeTrue(late == before + 1, "the registry gives IDs in sequence");

        assertThat(stamper.inspect(value).outputId()).as("asked again, not remembered as gone").isPositive();
    }

    /**
     * Issue 40, item 10: an input change the output subject refuses (BACKWARD: a field without a default) is
     * dead-lettered as output-schema-refused; once the operator relaxes the subject's compatibility, the output
     * schema is registered again after the pause, without a restart.
     */
    @Test
    void shouldRegisterARefusedOutputSchemaAgainAfterAPauseOnceCompatibilityIsRelaxed() throws Exception {
        String topic = "relaxed-" + System.nanoTime();
        compatibility(topic + "-value", "BACKWARD");
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000);
        SchemaStamper stamper = stamper(ValueFormat.AVRO, topic, OnExistingField.REJECT, SubjectStrategy.TOPIC, now::get);
        int v1 = register(topic + "-in-value", VERSIONS[0]);
        String breaking = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":["
                + "{\"name\":\"customer\",\"type\":\"string\"},{\"name\":\"priority\",\"type\":\"int\"}]}";
        int v2 = register(topic + "-other-value", breaking);
        GenericRecord order = new GenericData.Record(new Schema.Parser().parse(breaking));
        order.put("customer", "x");
        order.put("priority", 3);
        byte[] value = framed(v2, order);
        stamper.inspect(new byte[] {0, 0, 0, 0, (byte) v1, 2, 'x'});

        BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> stamper.inspect(value));
        assertThat(refused.code()).isEqualTo(BadRecordException.Code.OUTPUT_SCHEMA_REFUSED);
        compatibility(topic + "-value", "NONE");
        assertThat(catchThrowableOfType(BadRecordException.class, () -> stamper.inspect(value)))
                .as("within the pause: the verdict kept, no request").isNotNull();
        now.addAndGet(61_000);

        byte[] stamped = stamper.inspect(value).stamp(value, 77L);
        GenericRecord read = decodeWhole(new Schema.Parser().parse(schemaById(ByteBuffer.wrap(stamped, 1, 4).getInt())), stamped);
        assertThat(read.get("id")).isEqualTo(77L);
        assertThat(read.get("priority")).isEqualTo(3);
    }

    /**
     * Issue 40, item 9: a message with a field {@code Id} (proto3), a nested {@code message id}, an enum value {@code id}
     * keeps its fields (its values refused as field-exists), so the output file is one protoc accepts; {@code overwrite}
     * of an {@code int64 id} inside a oneof is refused (appending it would erase the oneof's other member).
     */
    @Test
    void shouldRegisterProtobufOutputsThatProtocAcceptsAndRefuseOverwritingAOneofMember() throws Exception {
        String topic = "protoc-" + System.nanoTime();
        String proto = "syntax = \"proto3\";\npackage acme;\nmessage Upper {\n  string Id = 1;\n}\n"
                + "message Holder {\n  message id {\n    string z = 1;\n  }\n  string x = 1;\n}\n"
                + "message Kinds {\n  enum Kind {\n    id = 0;\n  }\n  Kind kind = 1;\n}\n"
                + "message Plain {\n  string y = 1;\n}\n"
                + "message Choice {\n  oneof key {\n    int64 id = 1;\n    string name = 2;\n  }\n}\n";
        int input = register(topic + "-in-value", proto, "PROTOBUF");
        SchemaStamper stamper = stamper(ValueFormat.PROTOBUF, topic, OnExistingField.REJECT);

        byte[] plain = {0, 0, 0, 0, (byte) input, 2, 6, 10, 1, 'y'};       // indexes [3]
        int outputId = stamper.inspect(plain).outputId();
        for (byte index : new byte[] {0, 1, 2}) {
            BadRecordException refused = catchThrowableOfType(BadRecordException.class,
                    () -> stamper.inspect(new byte[] {0, 0, 0, 0, (byte) input, 2, (byte) (index * 2)}));
            assertThat(refused).as("message %d", index).isNotNull();
            assertThat(refused.code()).isEqualTo(BadRecordException.Code.FIELD_EXISTS);
        }
        assertThat(protoc(schemaById(outputId))).as("protoc on the output schema").isEmpty();

        SchemaStamper overwriting = stamper(ValueFormat.PROTOBUF, topic + "-o", OnExistingField.OVERWRITE);
        BadRecordException oneOf = catchThrowableOfType(BadRecordException.class,
                () -> overwriting.inspect(new byte[] {0, 0, 0, 0, (byte) input, 2, 8, 18, 1, 'n'}));     // Choice with name = "n"
        assertThat(oneOf).as("an ID appended into a oneof").isNotNull();
        assertThat(oneOf.code()).isEqualTo(BadRecordException.Code.FIELD_EXISTS);
        assertThat(oneOf.getMessage()).contains("oneof key");
    }

    /** protoc's complaints about a schema (empty when it compiles). */
    private static String protoc(String schema) throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("protoc");
        java.nio.file.Files.writeString(dir.resolve("out.proto"), schema);
        Process process = new ProcessBuilder("protoc", "-I", dir.toString(), "--descriptor_set_out=" + dir.resolve("out.desc"), "out.proto")
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as(output).isEqualTo(0);
        return output.strip();
    }

    private static SchemaStamper stamper(ValueFormat format, String topic, OnExistingField onExisting) {
        return stamper(format, topic, onExisting, SubjectStrategy.TOPIC);
    }

    private static SchemaStamper stamper(ValueFormat format, String topic, OnExistingField onExisting, SubjectStrategy strategy) {
        return stamper(format, topic, onExisting, strategy, System::currentTimeMillis);
    }

    private static SchemaStamper stamper(ValueFormat format, String topic, OnExistingField onExisting, SubjectStrategy strategy,
                                         java.util.function.LongSupplier clock) {
        StampSettings stamp = new StampSettings(null, JsonType.NUMBER, onExisting, 64, true, HeaderFormat.TEXT, format, "id", 0);
        SchemaRegistrySettings settings = new SchemaRegistrySettings(List.of(registry.url()), SubjectStrategy.TOPIC, null, null,
                null, null, null, null, Duration.ofSeconds(30), 100);
        return new SchemaStamper(stamp, strategy, topic, HttpSchemaRegistry.of(settings), 100, clock);
    }

    private static void compatibility(String subject, String level) throws Exception {
        assertThat(registry.call("PUT", "/config/" + subject, "{\"compatibility\":\"" + level + "\"}").statusCode()).isEqualTo(200);
    }

    private static int register(String subject, String schema) throws Exception {
        return register(subject, schema, "AVRO");
    }

    private static int register(String subject, String schema, String type) throws Exception {
        String body = JSON.createObjectNode().put("schema", schema).put("schemaType", type).toString();
        var answer = registry.call("POST", "/subjects/" + subject + "/versions", body);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        return JSON.readTree(answer.body()).path("id").asInt();
    }

    private static String schemaById(int id) throws Exception {
        return JSON.readTree(registry.call("GET", "/schemas/ids/" + id, null).body()).path("schema").asText();
    }

    private static byte[] framed(int schemaId, GenericRecord record) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(ByteBuffer.allocate(5).put((byte) 0).putInt(schemaId).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    private static GenericRecord decodeWhole(Schema schema, byte[] framed) throws Exception {
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(framed, 5, framed.length - 5, null);
        GenericRecord record = new GenericDatumReader<GenericRecord>(schema).read(null, decoder);
        assertThat(decoder.isEnd()).isTrue();
        return record;
    }
}
