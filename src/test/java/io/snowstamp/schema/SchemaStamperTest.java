package io.snowstamp.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.snowstamp.config.SchemaRegistrySettings.SubjectStrategy;
import io.snowstamp.config.StampSettings;
import io.snowstamp.config.StampSettings.HeaderFormat;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.config.StampSettings.ValueFormat;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/** The cache and the registry calls around the pure core, with a registry kept in memory. */
class SchemaStamperTest {
    private static final String ORDER = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\","
            + "\"fields\":[{\"name\":\"customer\",\"type\":\"string\"}]}";
    private static final String PROTO = "syntax = \"proto3\";\npackage acme;\nmessage A { string x = 1; }\nmessage B { int32 y = 4; }\n";

    private final MemoryRegistry registry = new MemoryRegistry();

    @Test
    void shouldAskTheRegistryOncePerInputSchemaAndKeepStampingWhileItIsDown() throws Exception {
        int input = registry.add(RegisteredSchema.AVRO, ORDER);
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);
        byte[] value = AvroStampingTest.framed(input, new byte[] {6, 'A', 'n', 'n'});

        Stamping first = stamper.inspect(value);
        registry.down = true;
        Stamping again = stamper.inspect(value);

        assertThat(again).isSameAs(first);
        assertThat(registry.calls).containsExactly("schema " + input, "register out-value");
        byte[] stamped = first.stamp(value, 300L);
        Schema output = new Schema.Parser().parse(registry.schemas.get(first.outputId()).schema());
        assertThat(AvroStampingTest.decodeWhole(output, stamped).get("id")).isEqualTo(300L);
        assertThat(ByteBuffer.wrap(stamped, 1, 4).getInt()).isEqualTo(first.outputId()).isNotEqualTo(input);
    }

    @Test
    void shouldReportAnOutageOfTheRegistryForAnUnknownSchemaAndStampOnceItIsBack() {
        int input = registry.add(RegisteredSchema.AVRO, ORDER);
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);
        byte[] value = AvroStampingTest.framed(input, new byte[] {0});
        registry.down = true;

        assertThatThrownBy(() -> stamper.inspect(value)).isInstanceOf(RegistryUnavailableException.class);
        assertThat(stamper.cached()).isZero();
        registry.down = false;
        assertThat(stamper.inspect(value).outputId()).isPositive();
    }

    @Test
    void shouldRememberARefusedSchemaWithoutAskingAgain() {
        int primitive = registry.add(RegisteredSchema.AVRO, "\"string\"");
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);
        byte[] value = AvroStampingTest.framed(primitive, new byte[] {0});

        for (int i = 0; i < 3; i++) {
            assertThat(catchThrowableOfType(BadRecordException.class, () -> stamper.inspect(value)).code()).isEqualTo(Code.NOT_RECORD);
        }
        BadRecordException unknown = catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(AvroStampingTest.framed(999, new byte[] {0})));
        assertThat(unknown.code()).isEqualTo(Code.UNKNOWN_SCHEMA);
        assertThat(registry.calls).containsExactly("schema " + primitive, "schema 999");
    }

    @Test
    void shouldRefuseASchemaOfTheOtherFormatAndAvroReferences() {
        int proto = registry.add(RegisteredSchema.PROTOBUF, PROTO);
        int referring = registry.add(new RegisteredSchema(RegisteredSchema.AVRO, ORDER, List.of(new RegisteredSchema.Reference("x", "y", 1))));
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);

        BadRecordException wrong = catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(AvroStampingTest.framed(proto, new byte[] {0})));
        assertThat(wrong.code()).isEqualTo(Code.WRONG_SCHEMA_TYPE);
        assertThat(wrong.getMessage()).isEqualTo("schema ID " + proto + " is a PROTOBUF schema, not AVRO (stamp.value-format=avro)");
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(AvroStampingTest.framed(referring, new byte[] {0}))).code()).isEqualTo(Code.SCHEMA_REFERENCES);
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(new byte[] {1, 0, 0, 0, 1})).code()).isEqualTo(Code.NO_MAGIC_BYTE);
    }

    @Test
    void shouldRefuseAValueWithAByteLeftOverOrMissingBeforeItIsStamped() {
        int avro = registry.add(RegisteredSchema.AVRO, ORDER);
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);
        stamper.inspect(AvroStampingTest.framed(avro, new byte[] {6, 'A', 'n', 'n'}));

        // one trailing byte: Avro readers ignore it and read the appended ID from the wrong place
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(AvroStampingTest.framed(avro, new byte[] {6, 'A', 'n', 'n', 0}))).code()).isEqualTo(Code.INVALID_VALUE);
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> stamper.inspect(AvroStampingTest.framed(avro, new byte[] {6, 'A', 'n'}))).code()).isEqualTo(Code.INVALID_VALUE);
        int proto = registry.add(RegisteredSchema.PROTOBUF, PROTO);
        SchemaStamper protobuf = stamper(ValueFormat.PROTOBUF, SubjectStrategy.TOPIC, 10);
        protobuf.inspect(ProtobufStampingTest.framed(proto, new byte[] {0}, new byte[] {10, 1, 'x'}));
        assertThat(catchThrowableOfType(BadRecordException.class,
                () -> protobuf.inspect(ProtobufStampingTest.framed(proto, new byte[] {0}, new byte[] {10, 2, 'x'}))).code())
                .isEqualTo(Code.INVALID_VALUE);
        assertThat(registry.calls).as("a bad value of a known schema asks the registry nothing").hasSize(5);
    }

    @Test
    void shouldKeepTheProtobufFieldNumberOfTheOutputSubjectAsTheInputEvolves() {
        SchemaStamper stamper = stamper(ValueFormat.PROTOBUF, SubjectStrategy.TOPIC, 10);
        int v1 = registry.add(RegisteredSchema.PROTOBUF, "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n}\n");
        int v2 = registry.add(RegisteredSchema.PROTOBUF, "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n  string email = 2;\n}\n");

        byte[] first = stamper.inspect(ProtobufStampingTest.framed(v1, new byte[] {0}, new byte[0])).stamp(
                ProtobufStampingTest.framed(v1, new byte[] {0}, new byte[0]), 5);
        byte[] second = stamper.inspect(ProtobufStampingTest.framed(v2, new byte[] {0}, new byte[0])).stamp(
                ProtobufStampingTest.framed(v2, new byte[] {0}, new byte[0]), 5);

        assertThat(java.util.Arrays.copyOfRange(second, 6, second.length)).as("the same tag for both versions")
                .isEqualTo(java.util.Arrays.copyOfRange(first, 6, first.length));
        assertThat(registry.subjects.get("out-value")).hasSize(2);
        for (int output : registry.subjects.get("out-value")) {
            assertThat(registry.schemas.get(output).schema()).contains("int64 id = 2047;");
        }
    }

    @Test
    void shouldReuseTheNumberTheOutputSubjectGivesTheFieldAndRefuseWhenTheInputTookIt() {
        // an output subject written before: User's field is number 2
        registry.register("out-value", new RegisteredSchema(RegisteredSchema.PROTOBUF,
                "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n  int64 id = 2;\n}\n", List.of()));
        int v1 = registry.add(RegisteredSchema.PROTOBUF, "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n  bool admin = 3;\n}\n");
        int v2 = registry.add(RegisteredSchema.PROTOBUF, "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n  string email = 2;\n}\n");

        Stamping stamping = stamper(ValueFormat.PROTOBUF, SubjectStrategy.TOPIC, 10).inspect(ProtobufStampingTest.framed(v1, new byte[] {0}, new byte[0]));
        assertThat(registry.schemas.get(stamping.outputId()).schema()).contains("int64 id = 2;");
        BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> stamper(ValueFormat.PROTOBUF, SubjectStrategy.TOPIC, 10)
                .inspect(ProtobufStampingTest.framed(v2, new byte[] {0}, new byte[0])));
        assertThat(refused.code()).isEqualTo(Code.FIELD_NUMBER_TAKEN);
        assertThat(refused.getMessage()).startsWith("field number 2, which the output subject gives 'id' in Protobuf message User,"
                + " is now used or reserved by the input schema");
    }

    @Test
    void shouldRegisterOneOutputSchemaPerProtobufFileNotPerMessage() {
        int proto = registry.add(RegisteredSchema.PROTOBUF, PROTO);
        SchemaStamper stamper = stamper(ValueFormat.PROTOBUF, SubjectStrategy.TOPIC, 10);

        int a = stamper.inspect(ProtobufStampingTest.framed(proto, new byte[] {0}, new byte[0])).outputId();
        int b = stamper.inspect(ProtobufStampingTest.framed(proto, new byte[] {2, 2}, new byte[0])).outputId();

        assertThat(b).isEqualTo(a);
        assertThat(registry.subjects.get("out-value")).containsExactly(a);
        assertThat(registry.schemas.get(a).schema()).contains("message A {", "message B {").containsPattern("(?s)A \\{.*int64 id = 2047;.*B \\{.*int64 id = 2047;");
    }

    @Test
    void shouldForgetSchemasBeyondItsCapacity() {
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 2);
        for (int i = 0; i < 5; i++) {
            stamper.inspect(AvroStampingTest.framed(registry.add(RegisteredSchema.AVRO, ORDER), new byte[] {0}));
            assertThat(stamper.cached()).isLessThanOrEqualTo(2);
        }
    }

    @Test
    void shouldRegisterUnderTheSubjectTheStrategyNames() {
        int avro = registry.add(RegisteredSchema.AVRO, ORDER);
        stamper(ValueFormat.AVRO, SubjectStrategy.RECORD, 10).inspect(AvroStampingTest.framed(avro, new byte[] {0}));
        stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC_RECORD, 10).inspect(AvroStampingTest.framed(avro, new byte[] {0}));
        int proto = registry.add(RegisteredSchema.PROTOBUF, PROTO);
        SchemaStamper protobuf = stamper(ValueFormat.PROTOBUF, SubjectStrategy.TOPIC_RECORD, 10);
        protobuf.inspect(ProtobufStampingTest.framed(proto, new byte[] {0}, new byte[0]));
        protobuf.inspect(ProtobufStampingTest.framed(proto, new byte[] {2, 2}, new byte[0]));

        assertThat(registry.calls).filteredOn(call -> call.startsWith("register"))
                .containsExactly("register com.acme.Order-stamped", "register out-com.acme.Order", "register out-acme.A", "register out-acme.B");
        assertThat(protobuf.cached()).as("one per message").isEqualTo(2);
    }

    /**
     * schema-registry.md: a refused output schema is registered again after a pause of 1 s that doubles, up to 60 s,
     * while it stays refused; its values are dead-lettered without a request in between.
     */
    @Test
    void shouldRegisterARefusedOutputSchemaAgainAfterAPauseOfOneSecondThatDoublesUpToSixtySeconds() {
        int input = registry.add(RegisteredSchema.AVRO, ORDER);
        long[] now = {1_000_000};
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10, () -> now[0]);
        byte[] value = AvroStampingTest.framed(input, new byte[] {6, 'A', 'n', 'n'});
        registry.refusing = true;
        assertThat(refusal(stamper, value)).endsWith("registered again after 1 s (the pause doubles up to 60 s while it is refused)");

        long refusedAt = now[0];
        for (long pause : new long[] {1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000}) {
            long registrations = registrations();
            now[0] = refusedAt + pause - 1;
            refusal(stamper, value);
            assertThat(registrations()).as("dead-lettered without a request %d ms into a pause of %d", pause - 1, pause)
                    .isEqualTo(registrations);
            now[0] = refusedAt + pause;
            refusal(stamper, value);
            assertThat(registrations()).as("registered again after %d ms", pause).isEqualTo(registrations + 1);
            refusedAt = now[0];
        }
        registry.refusing = false;      // the operator relaxed the output subject's compatibility
        now[0] += 60_000;
        assertThat(stamper.inspect(value).outputId()).as("stamped within the pause, without a restart").isPositive();
    }

    private static String refusal(SchemaStamper stamper, byte[] value) {
        BadRecordException refused = catchThrowableOfType(BadRecordException.class, () -> stamper.inspect(value));
        assertThat(refused.code()).isEqualTo(Code.OUTPUT_SCHEMA_REFUSED);
        return refused.getMessage();
    }

    private long registrations() {
        return registry.calls.stream().filter(call -> call.startsWith("register ")).count();
    }

    private SchemaStamper stamper(ValueFormat format, SubjectStrategy strategy, int capacity) {
        return stamper(format, strategy, capacity, System::currentTimeMillis);
    }

    private SchemaStamper stamper(ValueFormat format, SubjectStrategy strategy, int capacity, java.util.function.LongSupplier clock) {
        StampSettings stamp = new StampSettings(null, JsonType.NUMBER, OnExistingField.REJECT, 64, true, HeaderFormat.TEXT, format, "id", 0);
        return new SchemaStamper(stamp, strategy, "out", registry, capacity, clock);
    }

    /** IDs global across subjects, the same schema text under one ID, as registries do. */
    /**
     * Issue 40 item 9: a registry that restarts empty gives the kept output ID to another schema. The recheck asks one
     * request per kept schema while nothing changed; after the reset it registers the output schema again, and the
     * values get the new ID, under which the registry serves the output schema.
     */
    @Test
    void shouldRegisterTheOutputSchemaAgainWhenTheRegistryLostIt() throws Exception {
        int input = registry.add(RegisteredSchema.AVRO, ORDER);
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);
        byte[] value = AvroStampingTest.framed(input, new byte[] {6, 'A', 'n', 'n'});
        Stamping before = stamper.inspect(value);
        RegisteredSchema output = registry.schemas.get(before.outputId());
        registry.calls.clear();

        assertThat(stamper.recheck()).isEmpty();
        assertThat(registry.calls).as("one request per kept schema, none per value").containsExactly("schema " + before.outputId());

        registry.schemas.clear();       // restarted empty: the producer's schema first, then another one
        registry.subjects.clear();
        assertThat(registry.add(RegisteredSchema.AVRO, ORDER)).isEqualTo(input);
        assertThat(registry.add(RegisteredSchema.AVRO, "\"string\"")).isEqualTo(before.outputId());
        List<SchemaStamper.Reset> resets = stamper.recheck();

        Stamping after = stamper.inspect(value);
        assertThat(resets).containsExactly(new SchemaStamper.Reset(String.valueOf(input), before.outputId(), true, after.outputId(), null));
        assertThat(after.outputId()).isNotEqualTo(before.outputId());
        assertThat(registry.schemas.get(after.outputId())).isEqualTo(output);
        Schema schema = new Schema.Parser().parse(registry.schemas.get(after.outputId()).schema());
        assertThat(AvroStampingTest.decodeWhole(schema, after.stamp(value, 7L)).get("id")).isEqualTo(7L);
    }

    /**
     * The stream threads take a kept schema without a map lookup: a schema the recheck found lost (the registry restarted
     * empty, the producer has not registered it again) is not served from there; its values are looked up again (set aside), not stamped with an output ID the registry no longer has.
     */
    @Test
    void shouldNotServeAKeptSchemaTheRecheckChanged() throws Exception {
        int input = registry.add(RegisteredSchema.AVRO, ORDER);
        SchemaStamper stamper = stamper(ValueFormat.AVRO, SubjectStrategy.TOPIC, 10);
        byte[] value = AvroStampingTest.framed(input, new byte[] {6, 'A', 'n', 'n'});
        assertThat(stamper.remembered(value)).as("not seen yet").isNull();
        int kept = stamper.inspect(value).outputId();
        assertThat(stamper.remembered(value).outputId()).isEqualTo(kept);
        assertThat(stamper.remembered(value).outputId()).as("taken again").isEqualTo(kept);

        // restarted empty, the producer's schema registered again and another one under the kept output ID; the registry
        // goes down after answering the recheck's first request: the schema is to be asked again, its values set aside
        registry.schemas.clear();
        registry.subjects.clear();
        registry.add(RegisteredSchema.AVRO, ORDER);
        registry.add(RegisteredSchema.AVRO, "\"string\"");
        registry.answersBeforeDown = 1;
        assertThat(catchThrowable(stamper::recheck)).isInstanceOf(RegistryUnavailableException.class);
        registry.down = false;
        assertThat(stamper.remembered(value)).as("to be asked again after the outage").isNull();
        int registeredAgain = stamper.inspect(value).outputId();
        assertThat(registeredAgain).isNotEqualTo(kept);
        assertThat(stamper.remembered(value).outputId()).isEqualTo(registeredAgain);

        registry.schemas.clear();       // restarted empty; the producer has not registered its schema again
        registry.subjects.clear();
        stamper.recheck();
        assertThat(stamper.remembered(value)).as("lost: looked up again").isNull();
    }

    private static final class MemoryRegistry implements SchemaRegistryClient {
        final Map<Integer, RegisteredSchema> schemas = new HashMap<>();
        final List<String> calls = new ArrayList<>();
        /** subject -> its schemas' IDs, oldest first */
        final Map<String, List<Integer>> subjects = new HashMap<>();
        boolean down;
        /** When not negative: requests answered before the registry goes down. */
        int answersBeforeDown = -1;
        /** The output subject's compatibility refuses every new version (HTTP 409/422). */
        boolean refusing;

        int add(String type, String schema) {
            return add(new RegisteredSchema(type, schema, List.of()));
        }

        int add(RegisteredSchema schema) {
            schemas.put(schemas.size() + 1, schema);
            return schemas.size();
        }

        @Override
        public RegisteredSchema schema(int id) {
            check();
            calls.add("schema " + id);
            RegisteredSchema schema = schemas.get(id);
            if (schema == null) {
                throw new BadRecordException(Code.UNKNOWN_SCHEMA, "schema ID " + id + " is not in the schema registry");
            }
            return schema;
        }

        @Override
        public RegisteredSchema latest(String subject) {
            check();
            calls.add("latest " + subject);
            List<Integer> versions = subjects.get(subject);
            return versions == null ? null : schemas.get(versions.get(versions.size() - 1));
        }

        @Override
        public int register(String subject, RegisteredSchema schema) {
            check();
            calls.add("register " + subject);
            if (refusing) {
                throw new BadRecordException(Code.OUTPUT_SCHEMA_REFUSED, "the registry refused the output schema of " + subject);
            }
            for (Map.Entry<Integer, RegisteredSchema> known : schemas.entrySet()) {
                if (known.getValue().equals(schema)) {      // the same text, the same ID
                    subjects.computeIfAbsent(subject, s -> new ArrayList<>()).remove(known.getKey());
                    subjects.get(subject).add(known.getKey());
                    return known.getKey();
                }
            }
            int id = add(schema);
            subjects.computeIfAbsent(subject, s -> new ArrayList<>()).add(id);
            return id;
        }

        private void check() {
            if (answersBeforeDown == 0) {
                down = true;
                answersBeforeDown = -1;
            } else if (answersBeforeDown > 0) {
                answersBeforeDown--;
            }
            if (down) {
                throw new RegistryUnavailableException("the schema registry did not answer: down");
            }
        }
    }
}
