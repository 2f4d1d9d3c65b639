package io.snowstamp.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

/**
 * The Avro input of the schema-registry integration tests: an order record through three compatible
 * versions (a field with a default added in each), its values framed for a registry, and the registry
 * calls that set them up.
 */
public final class AvroOrders {
    /** Three versions of {@code com.acme.Order}, each BACKWARD compatible with the one before. */
    public static final String[] VERSIONS = {
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"}]}",
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"},"
                + "{\"name\":\"quantity\",\"type\":\"int\",\"default\":1}]}",
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"},"
                + "{\"name\":\"quantity\",\"type\":\"int\",\"default\":1},{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null}]}"};
    private static final ObjectMapper JSON = new ObjectMapper();

    private AvroOrders() {
    }

    /** Order {@code n} ("customer n", quantity n, a note on odd n) in {@code schemaText}, framed with {@code schemaId}. */
    public static byte[] value(int schemaId, String schemaText, int n) throws Exception {
        Schema schema = new Schema.Parser().parse(schemaText);
        GenericRecord order = new GenericData.Record(schema);
        order.put("customer", "customer " + n);
        if (schema.getField("quantity") != null) {
            order.put("quantity", n);
        }
        if (schema.getField("note") != null) {
            order.put("note", n % 2 == 0 ? null : "note " + n);
        }
        return framed(schemaId, order);
    }

    /** {@code record} in Avro's binary encoding, framed for a registry: byte 0, {@code schemaId}, the record. */
    public static byte[] framed(int schemaId, GenericRecord record) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(ByteBuffer.allocate(5).put((byte) 0).putInt(schemaId).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
        new GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, encoder);
        encoder.flush();
        return bytes.toByteArray();
    }

    /** Registers an Avro schema under {@code subject}; its ID. */
    public static int register(ApicurioRegistry registry, String subject, String schema) throws Exception {
        HttpResponse<String> answer = registry.call("POST", "/subjects/" + subject + "/versions",
                JSON.createObjectNode().put("schema", schema).toString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        return JSON.readTree(answer.body()).path("id").asInt();
    }

    /** Sets a subject's compatibility rule ({@code BACKWARD}, ...). */
    public static void compatibility(ApicurioRegistry registry, String subject, String level) throws Exception {
        assertThat(registry.call("PUT", "/config/" + subject, "{\"compatibility\":\"" + level + "\"}").statusCode()).isEqualTo(200);
    }
}
