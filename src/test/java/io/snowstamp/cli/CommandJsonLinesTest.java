package io.snowstamp.cli;

import io.snowstamp.testing.Cli;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exact JSON lines of {@code decode}, {@code tags list}, {@code recover}, {@code workers list} and
 * {@code consume}, written by Jackson from records: names, order and nulls as their help documents.
 */
class CommandJsonLinesTest {

    @Test
    void shouldDecodeAnIdIntoItsDocumentedFields() {
        Cli.Result result = Cli.run("decode", "0");

        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.out().strip()).matches("\\{\"id\":0,\"time\":\"[0-9T:.\\-]+Z\",\"worker\":0,\"datacenter\":0,\"sequence\":0}");
    }

    @Test
    void shouldWriteATagWithoutDefinitionAsNulls() {
        String line = JsonText.of(new TagsCommand.ListTags.TagLine("orders", false, null, null, null, 42L, null, null));

        assertThat(line).isEqualTo("{\"tag\":\"orders\",\"registered\":false,\"start\":null,\"step\":null,\"revision\":null,"
                + "\"max_id\":42,\"issued\":null,\"partition\":null}");
    }

    @Test
    void shouldWriteARecoverRowWithMinusOneForAnEmptySource() {
        String line = JsonText.of(new RecoverCommand.RowLine(2, 7, -1, 99, 99, null, "seed"));

        assertThat(line).isEqualTo("{\"partition\":2,\"worker\":7,\"fromChangelog\":-1,\"fromOutput\":99,\"resume\":99,"
                + "\"resumeTime\":null,\"action\":\"seed\"}");
    }

    @Test
    void shouldWriteAWorkerClaimWithItsMarksKeyedByWorker() {
        String line = JsonText.of(new WorkersCommand.Line("prod", 1, "app", 4, 2, "released", "1970-01-01T00:00:00.001Z", 9,
                null, "fp", "in", "out", "i-1", 3, new TreeMap<>(Map.of(4L, 100L, 5L, 200L)), "done"));

        assertThat(line).isEqualTo("{\"space\":\"prod\",\"datacenter\":1,\"application\":\"app\",\"firstWorker\":4,\"count\":2,"
                + "\"state\":\"released\",\"heartbeatAt\":\"1970-01-01T00:00:00.001Z\",\"heartbeatAgoMillis\":9,\"claimedAt\":null,"
                + "\"layout\":\"fp\",\"input\":\"in\",\"output\":\"out\",\"instance\":\"i-1\",\"claimOffset\":3,"
                + "\"marks\":{\"4\":100,\"5\":200},\"note\":\"done\"}");
    }

    @Test
    void shouldWriteAConsumedRecordWithItsValueAsJsonOrText() {
        ConsumerRecord<byte[], byte[]> json = new ConsumerRecord<>("t", 1, 5, "k".getBytes(StandardCharsets.UTF_8),
                "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
        ConsumerRecord<byte[], byte[]> text = new ConsumerRecord<>("t", 0, 6, null, "plain".getBytes(StandardCharsets.UTF_8));

        assertThat(RecordJson.line(json)).isEqualTo("{\"partition\":1,\"offset\":5,\"key\":\"k\",\"id\":null,\"value\":{\"a\":1}}");
        assertThat(RecordJson.line(text)).isEqualTo("{\"partition\":0,\"offset\":6,\"key\":null,\"id\":null,\"value\":\"plain\"}");
    }
}
