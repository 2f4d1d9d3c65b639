package io.snowstamp.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.state.IdHeader;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** Formats a consumed record as one JSON line: {@code {"partition","offset","key","id","value"}}. */
final class RecordJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RecordJson() {
    }

    static String line(ConsumerRecord<byte[], byte[]> record) {
        return JsonText.of(new Line(record.partition(), record.offset(),
                record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8), id(record), value(record.value())));
    }

    /** The line's fields in the order the class comment gives. */
    record Line(int partition, long offset, String key, Long id, JsonNode value) {
    }

    /** The ID header (either format) as a number, or null when absent or malformed. */
    static Long id(ConsumerRecord<byte[], byte[]> record) {
        try {
            long id = IdHeader.idOf(record.headers());
            return id < 0 ? null : id;
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
