package io.snowstamp.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** Formats a consumed record as one JSON line: {@code {"partition","offset","key","id","value"}}. */
final class RecordJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RecordJson() {
    }

    static String line(ConsumerRecord<byte[], byte[]> record) {
        ObjectNode node = JSON.createObjectNode();
        node.put("partition", record.partition());
        node.put("offset", record.offset());
        node.put("key", record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8));
        Long id = id(record);
        if (id == null) {
            node.putNull("id");
        } else {
            node.put("id", id);
        }
        node.set("value", value(record.value()));
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot format record as JSON", e);
        }
    }

    /** The {@code snowstamp-id} header as a number, or null when absent or not a number. */
    static Long id(ConsumerRecord<byte[], byte[]> record) {
        Header header = record.headers().lastHeader(IdHeader.ID);
        if (header == null || header.value() == null) {
            return null;
        }
        try {
            return IdHeader.parse(header.value());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The value as JSON when it parses as JSON, else as a string; null stays null. */
    private static JsonNode value(byte[] value) {
        if (value == null) {
            return JSON.nullNode();
        }
        try {
            JsonNode parsed = JSON.readTree(value);
            if (parsed != null && !parsed.isMissingNode()) {
                return parsed;
            }
        } catch (IOException ignored) {
            // not JSON: shown as text below
        }
        return JSON.getNodeFactory().textNode(new String(value, StandardCharsets.UTF_8));
    }
}
