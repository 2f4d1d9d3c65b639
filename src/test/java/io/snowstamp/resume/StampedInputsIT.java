package io.snowstamp.resume;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a task start under at-least-once finds already stamped, on a real broker, where a switch from exactly-once right
 * after a crash leaves records of transactions that were never committed in the output: an aborted one (the broker's
 * timeout, or a fence) and one still open (its producer dead, the timeout not yet run out). Their inputs are not in the
 * output and must be stamped; skipping them lost them (review finding c). The start's window, read read_uncommitted,
 * holds them too: it must not stand in for the read_committed read then.
 */
@Timeout(120)
class StampedInputsIT extends OnSharedBroker {
    private static final String INPUT = "events.raw";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    @Test
    void shouldNotFindTheInputsOfAbortedOrOpenTransactionsInTheOutput() throws Exception {
        String output = TestBroker.unique("stamped-inputs");
        broker.createTopic(output, 2);
        // partition 0: inputs 0..4 committed, 5..9 in an aborted transaction (its marker last);
        // partition 1: inputs 0..4 committed, 5..9 in a transaction still open
        try (KafkaProducer<byte[], byte[]> plain = broker.producer();
             KafkaProducer<byte[], byte[]> aborted = transactional("aborted-" + output);
             KafkaProducer<byte[], byte[]> open = transactional("open-" + output)) {
            for (int partition = 0; partition < 2; partition++) {
                for (long n = 0; n < 5; n++) {
                    plain.send(stamped(output, partition, n)).get();
                }
            }
            aborted.beginTransaction();
            LongStream.range(5, 10).forEach(n -> aborted.send(stamped(output, 0, n)));
            aborted.flush();        // in the log before the abort: an abort drops what is still unsent
            aborted.abortTransaction();
            open.beginTransaction();
            LongStream.range(5, 10).forEach(n -> open.send(stamped(output, 1, n)));
            open.flush();

            Properties client = new Properties();
            client.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            try (TailGuard guard = new TailGuard(client, output, IdLayout.preset("snowflake"), TIMEOUT, INPUT)) {
                for (int partition = 0; partition < 2; partition++) {
                    StampedInputs.Window window = guard.highestIssued(partition, 0, 1).sources();
                    int p = partition;
                    StampedInputs found = StampedInputs.of(window, 0, from -> guard.stampedInputs(p, INPUT, from));

                    assertThat(LongStream.range(0, 10).filter(n -> found.contains(n, time(n), key(n))).boxed().toList())
                            .as("partition %d: the committed inputs only", partition).isEqualTo(List.of(0L, 1L, 2L, 3L, 4L));
                    assertThat(found.complete()).as("the read reached the partition's beginning").isTrue();
                }
            }
            open.abortTransaction();
        }
    }

    private KafkaProducer<byte[], byte[]> transactional(String id) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        producer.initTransactions();
        return producer;
    }

    /** The output record of input {@code n} of {@code events.raw}-{@code partition}, with that input's time and key. */
    private static ProducerRecord<byte[], byte[]> stamped(String output, int partition, long n) {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(output, partition, time(n), key(n), new byte[0]);
        record.headers().add(IdHeader.SOURCE, (INPUT + "/" + partition + "/" + n).getBytes(StandardCharsets.UTF_8));
        return record;
    }

    private static long time(long n) {
        return 1_700_000_000_000L + n;
    }

    private static byte[] key(long n) {
        return ("k" + n).getBytes(StandardCharsets.UTF_8);
    }
}
