package io.snowstamp.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * operations.md, Logs: {@code SNOWSTAMP_LOG_FORMAT=json} writes one JSON object per line, and lifecycle events carry
 * their fields as key-value pairs ({@code "kvpList":[{"event":"task-assigned"},{"partition":"2"},...]}).
 */
@Tag("integration")
@Timeout(240)
class JsonLogsIT extends OnSharedBroker {
    @TempDir
    Path work;

    @Test
    void shouldWriteOneJsonObjectPerLineWithTheEventsFields() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 2);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("json-logs"), topics, "j1")
                .withEnv("SNOWSTAMP_LOG_FORMAT", "json");
        String stderr;
        try (ChildJvm child = stamper.start()) {
            broker.produce(topics.in(), 0, 10);
            assertThat(broker.consume(topics.out(), 10, Duration.ofSeconds(120))).as(child.logs()).hasSize(10);
            assertThat(child.terminate(60)).as(child.logs()).isZero();
            stderr = child.stderr();
        }
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : stderr.lines().filter(line -> !line.isBlank()).toList()) {
            JsonNode node = json.readTree(line);        // every line a JSON object, or the test fails here naming it
            assertThat(node.isObject()).as(line).isTrue();
            lines.add(node);
        }
        List<JsonNode> assigned = lines.stream().filter(node -> node.has("kvpList")
                && node.get("kvpList").toString().contains("{\"event\":\"task-assigned\"},{\"partition\":\"0\"}")).toList();
        assertThat(assigned).as(stderr).singleElement().satisfies(node -> {
            assertThat(node.get("level").asText()).isEqualTo("INFO");
            assertThat(node.get("kvpList").toString()).contains("{\"worker\":\"0\"}", "{\"epoch\":", "{\"resumeSource\":");
            assertThat(node.get("formattedMessage").asText()).contains("partition 0 worker 0: lease epoch");
        });
    }
}
