package io.snowstamp.json;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.BadRecordException;
import io.snowstamp.config.StampSettings.JsonType;
import io.snowstamp.config.StampSettings.OnExistingField;
import io.snowstamp.BadRecordException.Code;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class JsonIdSplicerTest {

    private static final long ID = 7_312_345_678_901_234_567L;
    /** Refuses duplicate members, so "the field appears exactly once" is part of "valid JSON". */
    private static final JsonMapper MAPPER = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private static final JsonIdSplicer NUMBER_REJECT = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 64);

    private static byte[] splice(JsonIdSplicer splicer, byte[] value, long id) {
        return splicer.write(value, splicer.inspect(value), id);
    }

    private static String splice(JsonIdSplicer splicer, String value) {
        return new String(splice(splicer, value.getBytes(UTF_8), ID), UTF_8);
    }

    private static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new AssertionError("not valid JSON: " + json, e);
        }
    }

    private static BadRecordException refusal(JsonIdSplicer splicer, byte[] value) {
        return catchThrowableOfType(BadRecordException.class, () -> splicer.inspect(value));
    }

    private static BadRecordException refusal(JsonIdSplicer splicer, String value) {
        return refusal(splicer, value.getBytes(UTF_8));
    }

    // ---- injecting into objects without the field

    @Test
    void shouldInjectIntoAnEmptyObject() {
        assertThat(splice(NUMBER_REJECT, "{}")).isEqualTo("{\"id\":7312345678901234567}");
        assertThat(splice(NUMBER_REJECT, "{ }")).isEqualTo("{\"id\":7312345678901234567 }");
    }

    @Test
    void shouldInjectAsTheFirstMemberOfAnObject() {
        assertThat(splice(NUMBER_REJECT, "{\"a\":1}")).isEqualTo("{\"id\":7312345678901234567,\"a\":1}");
        assertThat(splice(NUMBER_REJECT, "{\"a\":1,\"b\":\"x\"}")).isEqualTo("{\"id\":7312345678901234567,\"a\":1,\"b\":\"x\"}");
    }

    @Test
    void shouldKeepPrettyPrintingByteForByte() {
        String pretty = "  \r\n{\n  \"a\" : 1.50e+2,\n\t\"b\" : [ 1, 2 ],\r\n  \"c\" : { \"d\" : null }\n}\n";

        String out = splice(NUMBER_REJECT, pretty);

        assertThat(out).isEqualTo("  \r\n{\"id\":7312345678901234567,\n  \"a\" : 1.50e+2,\n\t\"b\" : [ 1, 2 ],\r\n"
                + "  \"c\" : { \"d\" : null }\n}\n");
        assertThat(parse(out).get("id").asLong()).isEqualTo(ID);
    }

    @Test
    void shouldKeepNumberSpellingAndEscapesUnchanged() {
        String value = "{\"a\":-0,\"b\":1.0E-3,\"c\":\"\\u00e9\\n\\\"\",\"d\":123456789012345678901234567890}";

        assertThat(splice(NUMBER_REJECT, value)).isEqualTo("{\"id\":7312345678901234567," + value.substring(1));
    }

    @Test
    void shouldInjectIntoUnicodeContentAtTheRightByte() {
        String value = "{\"\u540d\u524d\":\"\u96ea\",\"emoji\":\"\ud83d\ude80\",\"\u0441\u043d\u0435\u0433\":[\"\u00e9\"]}";

        String out = splice(NUMBER_REJECT, value);

        assertThat(out).isEqualTo("{\"id\":7312345678901234567," + value.substring(1));
        assertThat(parse(out).get("emoji").asText()).isEqualTo("\ud83d\ude80");
    }

    @Test
    void shouldKeepAUtf8ByteOrderMarkInFront() {
        String out = splice(NUMBER_REJECT, "\ufeff{\"a\":1}");

        assertThat(out).isEqualTo("\ufeff{\"id\":7312345678901234567,\"a\":1}");
    }

    @Test
    void shouldIgnoreTheFieldNameInsideNestedObjectsAndArrays() {
        String value = "{\"a\":{\"id\":1,\"b\":[{\"id\":2}]},\"c\":[1,{\"x\":{\"id\":{}}}],\"d\":\"id\"}";

        String out = splice(NUMBER_REJECT, value);

        assertThat(out).isEqualTo("{\"id\":7312345678901234567," + value.substring(1));
        assertThat(parse(out).get("a")).isEqualTo(parse(value).get("a"));
    }

    @Test
    void shouldWriteTheIdAsAStringWhenConfigured() {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.STRING, OnExistingField.REJECT, 64);

        assertThat(splice(splicer, "{\"a\":1}")).isEqualTo("{\"id\":\"7312345678901234567\",\"a\":1}");
        assertThat(splice(splicer, "{}")).isEqualTo("{\"id\":\"7312345678901234567\"}");
        assertThat(parse(splice(splicer, "{}")).get("id").isTextual()).isTrue();
    }

    @Test
    void shouldWriteTheIdAsANumberByDefault() {
        JsonNode node = parse(splice(NUMBER_REJECT, "{}"));

        assertThat(node.get("id").isIntegralNumber()).isTrue();
        assertThat(node.get("id").asLong()).isEqualTo(ID);
        assertThat(new String(splice(NUMBER_REJECT, "{}".getBytes(UTF_8), 0), UTF_8)).isEqualTo("{\"id\":0}");
        assertThat(new String(splice(NUMBER_REJECT, "{}".getBytes(UTF_8), Long.MAX_VALUE), UTF_8))
                .isEqualTo("{\"id\":9223372036854775807}");
    }

    @Test
    void shouldEscapeAFieldNameThatNeedsIt() {
        String field = "a\"b\\c\nd\u540d";
        JsonIdSplicer splicer = new JsonIdSplicer(field, JsonType.NUMBER, OnExistingField.REJECT, 64);

        String out = splice(splicer, "{\"x\":1}");

        assertThat(out).isEqualTo("{\"a\\\"b\\\\c\\nd\u540d\":7312345678901234567,\"x\":1}");
        JsonNode node = parse(out);
        assertThat(node.get(field).asLong()).isEqualTo(ID);
        assertThat(node.get("x").asInt()).isEqualTo(1);
    }

    @Test
    void shouldRecogniseAnEscapedFieldNameInTheValueAsTheField() {
        JsonIdSplicer splicer = new JsonIdSplicer("a\"b", JsonType.NUMBER, OnExistingField.REJECT, 64);

        assertThat(refusal(splicer, "{\"a\\\"b\":1}").code()).isEqualTo(Code.FIELD_EXISTS);
        assertThat(refusal(NUMBER_REJECT, "{\"i\\u0064\":1}").code()).isEqualTo(Code.FIELD_EXISTS);
    }

    @Test
    void shouldRefuseDuplicateKeysAtTheTopLevel() {
        for (String value : new String[] {"{\"a\":1,\"a\":2}", "{\"a\":{\"b\":1},\"a\":[]}", "{\"a\":1,\"\\u0061\":1}"}) {
            BadRecordException e = refusal(NUMBER_REJECT, value);
            assertThat(e).as(value).isNotNull();
            assertThat(e.code()).as(value).isEqualTo(Code.DUPLICATE_KEY);
            assertThat(e).hasMessageContaining("Duplicate field 'a'");
        }
    }

    /**
     * Duplicate names below the top level are legal JSON syntax, RFC 8259 leaves their meaning to the reader, and
     * the splice never touches them: the value is stamped, byte for byte.
     */
    @Test
    void shouldStampAValueWithDuplicateNamesBelowTheTopLevel() {
        for (String value : new String[] {"{\"a\":{\"b\":1,\"b\":2}}", "{\"a\":[{\"c\":1,\"c\":1}]}",
                "{\"x\":1,\"a\":{\"id\":1,\"id\":2,\"d\":{\"e\":[],\"e\":{}}}}"}) {
            assertThat(splice(NUMBER_REJECT, value)).as(value).isEqualTo("{\"id\":7312345678901234567," + value.substring(1));
        }
    }

    /** Below the top level every byte is still checked: each kind of bad value nested at depth 1 and 3 is refused. */
    static Stream<Arguments> badNested() {
        return Stream.of(
                Arguments.of("{\"b\":1,}", Code.NOT_JSON),                 // trailing comma
                Arguments.of("{'b':1}", Code.NOT_JSON),                       // single quotes
                Arguments.of("{b:1}", Code.NOT_JSON),                         // unquoted name
                Arguments.of("[1 /* c */]", Code.NOT_JSON),                   // comment
                Arguments.of("[NaN]", Code.NOT_JSON),
                Arguments.of("[01]", Code.NOT_JSON),                          // leading zero
                Arguments.of("[1.]", Code.NOT_JSON),
                Arguments.of("[-]", Code.NOT_JSON),
                Arguments.of("[1e]", Code.NOT_JSON),
                Arguments.of("[tru]", Code.NOT_JSON),
                Arguments.of("[\"\\x\"]", Code.NOT_JSON),                    // unknown escape
                Arguments.of("[\"\\u12g4\"]", Code.NOT_JSON),                // bad \\u escape
                Arguments.of("[\"a\tb\"]", Code.NOT_JSON),                    // raw control character in a string
                Arguments.of("{\"a\nb\":1}", Code.NOT_JSON),                  // ... and in a name
                Arguments.of("[1 2]", Code.NOT_JSON),                         // missing comma
                Arguments.of("{\"b\" 1}", Code.NOT_JSON),                     // missing colon
                Arguments.of("[1}", Code.NOT_JSON),                           // mismatched close
                Arguments.of("[\"\u00ff\"]", null));                          // valid: a control for the cases above
    }

    @ParameterizedTest
    @MethodSource("badNested")
    void shouldRefuseBadContentBelowTheTopLevel(String nested, Code code) {
        for (String value : new String[] {"{\"a\":" + nested + ",\"z\":0}", "{\"a\":[{\"b\":[" + nested + "]}],\"z\":0}"}) {
            if (code == null) {
                assertThat(splice(NUMBER_REJECT, value)).as(value).startsWith("{\"id\":");
                continue;
            }
            BadRecordException e = refusal(NUMBER_REJECT, value);
            assertThat(e).as(value).isNotNull();
            assertThat(e.code()).as(value).isEqualTo(code);
        }
    }

    @Test
    void shouldRefuseTruncationBelowTheTopLevel() {
        for (String value : new String[] {"{\"a\":{\"b\":[1,{\"c\":", "{\"a\":[[[", "{\"a\":{\"b\":\"x", "{\"a\":[1,2"}) {
            BadRecordException e = refusal(NUMBER_REJECT, value);
            assertThat(e).as(value).isNotNull();
            assertThat(e.code()).as(value).isEqualTo(Code.TRUNCATED);
        }
    }

    /** Past a few members the names go to a table: every duplicate at the top of objects of any size; nested ones pass. */
    @Test
    void shouldRefuseDuplicateKeysInLargeObjectsAndAcceptDistinctOnes() {
        StringBuilder distinct = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            distinct.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":").append(i);
        }
        assertThat(splice(NUMBER_REJECT, "{" + distinct + "}")).startsWith("{\"id\":").contains("\"k39\":39");
        assertThat(splice(NUMBER_REJECT, "{\"a\":[{" + distinct + "},[{" + distinct + "}]]}")).startsWith("{\"id\":");
        for (String dup : new String[] {"k0", "k15", "k16", "k39"}) {
            BadRecordException e = refusal(NUMBER_REJECT, "{" + distinct + ",\"" + dup + "\":0}");
            assertThat(e.code()).as(dup).isEqualTo(Code.DUPLICATE_KEY);
            assertThat(e).hasMessageContaining("Duplicate field '" + dup + "'");
            assertThat(splice(NUMBER_REJECT, "{\"a\":[[{" + distinct + ",\"" + dup + "\":0}]]}")).startsWith("{\"id\":");
        }
        // the same name in sibling or nested objects is no duplicate
        assertThat(splice(NUMBER_REJECT, "{\"a\":{\"x\":1},\"b\":{\"x\":{\"x\":2}},\"x\":[{\"x\":3},{\"x\":4}]}")).startsWith("{\"id\":");
    }

    /** Hundreds of members: the table of names grows several times and still finds every duplicate. */
    @Test
    void shouldRefuseDuplicateKeysInObjectsOfHundredsOfMembers() {
        StringBuilder distinct = new StringBuilder();
        for (int i = 0; i < 700; i++) {
            distinct.append(i == 0 ? "" : ",").append("\"f").append(i).append("\":\"w\"");
        }
        assertThat(splice(NUMBER_REJECT, "{" + distinct + "}")).startsWith("{\"id\":").contains("\"f699\":\"w\"");
        for (String dup : new String[] {"f0", "f16", "f17", "f63", "f64", "f511", "f699"}) {
            BadRecordException e = refusal(NUMBER_REJECT, "{" + distinct + ",\"" + dup + "\":1}");
            assertThat(e.code()).as(dup).isEqualTo(Code.DUPLICATE_KEY);
            assertThat(e).hasMessageContaining("Duplicate field '" + dup + "'");
        }
    }

    /**
     * Names chosen to share one hash ("Aa" and "BB" hash alike, so do all strings of such pairs): the long probe
     * runs move the names to the collision-proof set, which still finds duplicates and accepts distinct names.
     */
    @Test
    void shouldRefuseDuplicatesAmongNamesThatCollideOnPurpose() {
        List<String> colliding = new ArrayList<>(List.of(""));
        for (int bit = 0; bit < 7; bit++) {
            List<String> longer = new ArrayList<>();
            for (String prefix : colliding) {
                longer.add(prefix + "Aa");
                longer.add(prefix + "BB");
            }
            colliding = longer;
        }
        int hash = colliding.get(0).hashCode();
        assertThat(colliding).hasSize(128).allMatch(n -> n.hashCode() == hash);
        String members = colliding.stream().map(n -> "\"" + n + "\":1").collect(Collectors.joining(","));
        assertThat(splice(NUMBER_REJECT, "{" + members + "}")).startsWith("{\"id\":");
        for (String dup : new String[] {colliding.get(0), colliding.get(20), colliding.get(127)}) {
            BadRecordException e = refusal(NUMBER_REJECT, "{" + members + ",\"" + dup + "\":2}");
            assertThat(e.code()).as(dup).isEqualTo(Code.DUPLICATE_KEY);
        }
    }

    @Test
    void shouldRefuseNestingDeeperThanTheLimit() {
        JsonIdSplicer shallow = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.REJECT, 3);
        assertThat(splice(shallow, "{\"a\":{\"b\":[1]}}")).startsWith("{\"id\":");

        BadRecordException e = refusal(shallow, "{\"a\":{\"b\":[[1]]}}");
        assertThat(e.code()).isEqualTo(Code.TOO_DEEP);
        assertThat(e).hasMessageContaining("nesting depth");
    }

    /** operations.md: {@code limit-exceeded} for a number or string of absurd length, at the top level or below it. */
    @Test
    void shouldRefuseANumberOrStringOfAbsurdLengthAsLimitExceeded() {
        String longNumber = "1".repeat(1_001);           // Jackson's default number limit: 1,000 digits
        String longName = "n".repeat(50_001);            // ... and name limit: 50,000 characters
        assertThat(splice(NUMBER_REJECT, "{\"a\":" + "1".repeat(1_000) + "}")).as("a control at the limit").startsWith("{\"id\":");
        for (String value : new String[] {"{\"a\":" + longNumber + "}", "{\"a\":[{\"b\":" + longNumber + "}]}",
                "{\"" + longName + "\":1}", "{\"a\":{\"" + longName + "\":1}}"}) {
            BadRecordException e = refusal(NUMBER_REJECT, value);
            assertThat(e).as(value.substring(0, 12)).isNotNull();
            assertThat(e.code()).as(value.substring(0, 12)).isEqualTo(Code.LIMIT_EXCEEDED);
            assertThat(e).hasMessageStartingWith("value exceeds a JSON limit: ");
        }
    }

    // ---- an existing field: reject, keep, overwrite at every position

    static Stream<Arguments> existingField() {
        return Stream.of(
                Arguments.of("only", "{\"id\":5}", "{\"id\":7312345678901234567}"),
                Arguments.of("first", "{\"id\":5,\"a\":1,\"b\":2}", "{\"id\":7312345678901234567,\"a\":1,\"b\":2}"),
                Arguments.of("middle", "{\"a\":1,\"id\":5,\"b\":2}", "{\"id\":7312345678901234567,\"a\":1,\"b\":2}"),
                Arguments.of("last", "{\"a\":1,\"b\":2,\"id\":5}", "{\"id\":7312345678901234567,\"a\":1,\"b\":2}"),
                Arguments.of("only, spaced", "{ \"id\" : 5 }", "{\"id\":7312345678901234567 }"),
                Arguments.of("first, spaced", "{ \"id\" : 5 , \"a\" : 1 }", "{\"id\":7312345678901234567, \"a\" : 1 }"),
                Arguments.of("middle, spaced", "{ \"a\" : 1 , \"id\" : 5 , \"b\" : 2 }",
                        "{\"id\":7312345678901234567, \"a\" : 1 , \"b\" : 2 }"),
                Arguments.of("last, spaced", "{ \"a\" : 1 , \"id\" : 5 }", "{\"id\":7312345678901234567, \"a\" : 1 }"),
                Arguments.of("only, pretty", "{\n  \"id\": 5\n}\n", "{\"id\":7312345678901234567\n  }\n"),
                Arguments.of("first, pretty", "{\n  \"id\": 5,\n  \"a\": 1\n}", "{\"id\":7312345678901234567,\n  \"a\": 1\n}"),
                Arguments.of("middle, pretty", "{\n  \"a\": 1,\n  \"id\": \"x\",\n  \"b\": 2\n}",
                        "{\"id\":7312345678901234567,\n  \"a\": 1,\n  \"b\": 2\n}"),
                Arguments.of("last, pretty", "{\n  \"a\": 1,\n  \"b\": 2,\n  \"id\": [1, {\"id\": 2}]\n}",
                        "{\"id\":7312345678901234567,\n  \"a\": 1,\n  \"b\": 2}"),
                Arguments.of("middle, object value", "{\"a\":{\"id\":1},\"id\":{\"x\":[1,{}]},\"b\":[]}",
                        "{\"id\":7312345678901234567,\"a\":{\"id\":1},\"b\":[]}"),
                Arguments.of("last, unicode", "{\"\u540d\":\"\u96ea\",\"id\":\"\ud83d\ude80\"}",
                        "{\"id\":7312345678901234567,\"\u540d\":\"\u96ea\"}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("existingField")
    void shouldRejectAnExistingFieldByDefault(String position, String value, String overwritten) {
        BadRecordException e = refusal(NUMBER_REJECT, value);

        assertThat(e.code()).isEqualTo(Code.FIELD_EXISTS);
        assertThat(e).hasMessage("field 'id' already exists (stamp.on-existing-field=reject)");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("existingField")
    void shouldKeepAnExistingFieldUnchanged(String position, String value, String overwritten) {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.KEEP, 64);
        byte[] bytes = value.getBytes(UTF_8);

        assertThat(splice(splicer, bytes, ID)).isSameAs(bytes);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("existingField")
    void shouldOverwriteAnExistingFieldLeavingValidJson(String position, String value, String overwritten) {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, OnExistingField.OVERWRITE, 64);

        String out = splice(splicer, value);

        assertThat(out).isEqualTo(overwritten);
        JsonNode result = parse(out);
        assertThat(result.get("id").isIntegralNumber()).isTrue();
        assertThat(result.get("id").asLong()).isEqualTo(ID);
        assertThat(result.fieldNames().next()).isEqualTo("id");
        ObjectNode others = ((ObjectNode) result.deepCopy()).without("id");
        assertThat(others).isEqualTo(((ObjectNode) parse(value)).without("id"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("existingField")
    void shouldOverwriteAnExistingFieldWithAString(String position, String value, String overwritten) {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.STRING, OnExistingField.OVERWRITE, 64);

        String out = splice(splicer, value);

        assertThat(out).isEqualTo(overwritten.replace("7312345678901234567", "\"7312345678901234567\""));
        assertThat(parse(out).get("id").textValue()).isEqualTo("7312345678901234567");
    }

    // ---- bad records

    @ParameterizedTest
    @EnumSource(OnExistingField.class)
    void shouldRefuseADuplicateTargetFieldWhateverThePolicy(OnExistingField policy) {
        JsonIdSplicer splicer = new JsonIdSplicer("id", JsonType.NUMBER, policy, 64);

        for (String value : new String[] {"{\"id\":1,\"id\":2}", "{\"a\":0,\"id\":1,\"b\":{\"id\":3},\"id\":2}"}) {
            BadRecordException e = refusal(splicer, value);
            assertThat(e.code()).as(value).isEqualTo(Code.DUPLICATE_KEY);
            assertThat(e).hasMessageContaining("Duplicate field 'id'");
        }
    }

    static Stream<Arguments> truncated() {
        return Stream.of(
                Arguments.of("{"),
                Arguments.of("{\"a\""),
                Arguments.of("{\"a\":"),
                Arguments.of("{\"a\":1"),
                Arguments.of("{\"a\":1,"),
                Arguments.of("{\"a\":[1,2"),
                Arguments.of("{\"a\":{\"b\":\"unterminated"));
    }

    @ParameterizedTest
    @MethodSource("truncated")
    void shouldRefuseTruncatedJson(String value) {
        BadRecordException e = refusal(NUMBER_REJECT, value);

        assertThat(e.code()).isEqualTo(Code.TRUNCATED);
        assertThat(e).hasMessageStartingWith("value is not well-formed JSON");
    }

    static Stream<Arguments> notJson() {
        return Stream.of(
                Arguments.of("{\"a\":1,}"),
                Arguments.of("{'a':1}"),
                Arguments.of("{a:1}"),
                Arguments.of("{\"a\":1 /* comment */}"),
                Arguments.of("{\"a\":NaN}"),
                Arguments.of("{\"a\":01}"),
                Arguments.of("{\"a\" 1}"),
                Arguments.of("not json"),
                Arguments.of("{\"a\":1}]"),
                Arguments.of("{\"a\":1} trailing words"),
                Arguments.of("{\"a\":1}\u0000"));
    }

    @ParameterizedTest
    @MethodSource("notJson")
    void shouldRefuseMalformedOrTruncatedJson(String value) {
        BadRecordException e = refusal(NUMBER_REJECT, value);

        assertThat(e.code()).isEqualTo(Code.NOT_JSON);
        assertThat(e).hasMessageStartingWith("value is not well-formed JSON");
    }

    @Test
    void shouldRefuseInvalidUtf8() {
        byte[] value = {'{', '"', 'a', '"', ':', '"', (byte) 0xff, '"', '}'};

        assertThat(refusal(NUMBER_REJECT, value).code()).isEqualTo(Code.INVALID_UTF8);
        byte[] badContinuation = {'{', '"', 'a', '"', ':', '"', (byte) 0xc3, (byte) 0x28, '"', '}'};
        assertThat(refusal(NUMBER_REJECT, badContinuation).code()).isEqualTo(Code.INVALID_UTF8);
    }

    /**
     * Sequences of the right shape that UTF-8 (RFC 3629) still forbids, which Jackson's tokenizer lets through in
     * the strings it skips: refused wherever they are, in a string or a name, at the top level or nested.
     */
    @Test
    void shouldRefuseOverlongFormsSurrogatesAndCodePointsBeyondUnicode() {
        int[][] forbidden = {{0xC0, 0x80}, {0xC1, 0xBF}, {0xE0, 0x80, 0x80}, {0xE0, 0x9F, 0xBF}, {0xED, 0xA0, 0x80},
            {0xED, 0xBF, 0xBF}, {0xF0, 0x80, 0x80, 0x80}, {0xF0, 0x8F, 0xBF, 0xBF}, {0xF4, 0x90, 0x80, 0x80},
            {0xF5, 0x80, 0x80, 0x80}, {0xF7, 0xBF, 0xBF, 0xBF}};
        for (int[] sequence : forbidden) {
            for (String template : new String[] {"{\"a\":\"x?y\"}", "{\"x?\":1}", "{\"a\":[{\"b\":\"?\"}]}", "{\"a\":{\"?\":0}}"}) {
                byte[] value = withBytes(template, sequence);
                BadRecordException e = refusal(NUMBER_REJECT, value);
                assertThat(e).as("%s in %s", java.util.Arrays.toString(sequence), template).isNotNull();
                assertThat(e.code()).as(template).isEqualTo(Code.INVALID_UTF8);
            }
        }
        // the edges of each range are well-formed
        int[][] allowed = {{0xC2, 0x80}, {0xDF, 0xBF}, {0xE0, 0xA0, 0x80}, {0xED, 0x9F, 0xBF}, {0xEE, 0x80, 0x80},
            {0xF0, 0x90, 0x80, 0x80}, {0xF4, 0x8F, 0xBF, 0xBF}};
        for (int[] sequence : allowed) {
            byte[] value = withBytes("{\"a\":[{\"?\":\"?\"}]}", sequence);
            assertThat(NUMBER_REJECT.write(value, NUMBER_REJECT.inspect(value), ID)).as(java.util.Arrays.toString(sequence))
                    .startsWith("{\"id\":".getBytes(UTF_8));
        }
    }

    /** The template's UTF-8 bytes with each {@code ?} replaced by the sequence. */
    private static byte[] withBytes(String template, int[] sequence) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte b : template.getBytes(UTF_8)) {
            if (b == '?') {
                for (int s : sequence) {
                    out.write(s);
                }
            } else {
                out.write(b);
            }
        }
        return out.toByteArray();
    }

    static Stream<Charset> otherEncodings() {
        return Stream.of(StandardCharsets.UTF_16BE, StandardCharsets.UTF_16LE, StandardCharsets.UTF_16,
                Charset.forName("UTF-32BE"), Charset.forName("UTF-32LE"));
    }

    /** Jackson reads UTF-16 and UTF-32 too, but the splice works on UTF-8 bytes: such values must not be mangled. */
    @ParameterizedTest
    @MethodSource("otherEncodings")
    void shouldRefuseJsonThatIsNotUtf8(Charset charset) {
        byte[] value = "{\"a\":1}".getBytes(charset);

        BadRecordException e = refusal(NUMBER_REJECT, value);

        assertThat(e).as("%s spliced into garbage instead of being refused", charset).isNotNull();
        assertThat(e.code()).isEqualTo(Code.NOT_JSON);
    }

    static Stream<Arguments> notObjects() {
        return Stream.of(
                Arguments.of("[1,2]", "value is a JSON array, not a JSON object"),
                Arguments.of("[{\"a\":1}]", "value is a JSON array, not a JSON object"),
                Arguments.of("\"text\"", "value is a JSON string, not a JSON object"),
                Arguments.of("42", "value is a JSON number, not a JSON object"),
                Arguments.of("-1.5e3", "value is a JSON number, not a JSON object"),
                Arguments.of("true", "value is a JSON boolean, not a JSON object"),
                Arguments.of("null", "value is JSON null, not a JSON object"),
                Arguments.of("", "value is empty, not a JSON object"),
                Arguments.of(" \n\t", "value is empty, not a JSON object"));
    }

    @ParameterizedTest
    @MethodSource("notObjects")
    void shouldRefuseAValueThatIsNotAnObject(String value, String message) {
        BadRecordException e = refusal(NUMBER_REJECT, value);

        assertThat(e.code()).isEqualTo(Code.NOT_OBJECT);
        assertThat(e).hasMessage(message);
    }

    @Test
    void shouldRefuseANullValue() {
        BadRecordException e = refusal(NUMBER_REJECT, (byte[]) null);

        assertThat(e.code()).isEqualTo(Code.NOT_OBJECT);
        assertThat(e).hasMessage("value is null (a tombstone), not a JSON object");
    }

    @Test
    void shouldRefuseEmptyBytes() {
        assertThat(refusal(NUMBER_REJECT, new byte[0]).code()).isEqualTo(Code.NOT_OBJECT);
    }

    @Test
    void shouldRefuseJsonAfterTheObject() {
        for (String value : new String[] {"{\"a\":1} {}", "{}1", "{} []", "{}\"x\"", "{}\nnull", "{\"id\":1} {}"}) {
            BadRecordException e = refusal(NUMBER_REJECT, value);

            assertThat(e).as(value).isNotNull();
            assertThat(e.code()).as(value).isEqualTo(Code.TRAILING_CONTENT);
            assertThat(e).hasMessage("value has content after the JSON object");
        }
    }

    @Test
    void shouldAcceptWhitespaceAfterTheObject() {
        assertThat(splice(NUMBER_REJECT, "{\"a\":1} \r\n\t")).isEqualTo("{\"id\":7312345678901234567,\"a\":1} \r\n\t");
    }

    @Test
    void shouldNameEachCodeInLowerCaseWithDashes() {
        assertThat(Code.NOT_JSON.header()).isEqualTo("not-json");
        assertThat(Code.NOT_OBJECT.header()).isEqualTo("not-object");
        assertThat(Code.FIELD_EXISTS.header()).isEqualTo("field-exists");
        assertThat(Code.DUPLICATE_KEY.header()).isEqualTo("duplicate-key");
        assertThat(Code.TRAILING_CONTENT.header()).isEqualTo("trailing-content");
    }

    @Test
    void shouldCaptureNoStackTraceForBadInput() {
        assertThat(refusal(NUMBER_REJECT, "[]").getStackTrace()).isEmpty();
    }
}
