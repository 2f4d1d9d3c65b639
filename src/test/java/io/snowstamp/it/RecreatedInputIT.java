package io.snowstamp.it;

import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The input topic deleted and created again under at-least-once (review finding a): its offsets start at 0 again, and
 * the output still holds the old incarnation's provenance {@code raw/0/0..N}. A start skips an input only when the
 * output record naming its offset carries its timestamp too; the new inputs were produced later, so every one of them
 * is stamped. Before, the new inputs at the offsets the output named were skipped as already stamped: lost.
 */
@Tag("integration")
@Timeout(400)
class RecreatedInputIT extends OnSharedBroker {
    private static final int OLD = 20;
    private static final int NEW = 10;

    @TempDir
    Path work;

    @Test
    void shouldStampEveryInputOfAnInputTopicCreatedAgain() throws Exception {
        String servers = broker.bootstrapServers();
        Stamper.Topics topics = Stamper.Topics.create(servers, 1);
        Stamper spec = Stamper.of(work, servers, TestBroker.unique("app"), topics, "recreated-1")
                .with("processing.guarantee", "at_least_once");
        broker.produce(topics.in(), 0, OLD);
        try (ChildJvm stamper = spec.start()) {
            assertThat(broker.consume(topics.out(), OLD, Duration.ofSeconds(60))).as(stamper.logs()).hasSize(OLD);
            TestBroker.awaitCommitted(servers, spec.applicationId(), topics.in(), OLD, Duration.ofSeconds(60));
            assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
        }

        TestBroker.deleteTopic(servers, topics.in());
        TestBroker.createTopic(servers, topics.in(), 1);
        // the same keys as inputs 0..9 of the old topic, at the same offsets, produced later: other inputs
        broker.produce(topics.in(), 0, NEW);
        try (ChildJvm stamper = spec.start()) {
            List<ConsumerRecord<byte[], byte[]>> out = broker.consume(topics.out(), OLD + NEW, Duration.ofSeconds(90));

            Map<String, Integer> copies = new TreeMap<>();
            out.forEach(record -> copies.merge(source(record), 1, Integer::sum));
            assertThat(out).as("every new input stamped, none skipped as the old topic's\n%s\n%s", copies, stamper.logs())
                    .hasSize(OLD + NEW);
            for (int n = 0; n < NEW; n++) {
                assertThat(copies.get(topics.in() + "/0/" + n)).as("offset %d: the old input's record and the new one's", n)
                        .isEqualTo(2);
            }
            assertThat(stamper.terminate(60)).as(stamper.logs()).isIn(0, 143);
        }
    }

    private static String source(ConsumerRecord<byte[], byte[]> record) {
        var header = record.headers().lastHeader(IdHeader.SOURCE);
        return header == null ? "(none)" : new String(header.value(), StandardCharsets.UTF_8);
    }
}
