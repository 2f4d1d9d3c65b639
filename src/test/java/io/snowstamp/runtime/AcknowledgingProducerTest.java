package io.snowstamp.runtime;

import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.stream.ProducerFlushes;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Under at-least-once the producer tells its stream thread's tasks of its flushes and of every send that failed. */
class AcknowledgingProducerTest {
    @Test
    void shouldTellTheFlushesAndTheFailedSendsOfItsStreamThread() {
        MockProducer<byte[], byte[]> mock = new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
        AcknowledgingProducer producer = new AcknowledgingProducer(mock, WriteAcks.of("app-changelog"), null, Duration.ofMinutes(1));

        producer.send(new ProducerRecord<>("out", 0, new byte[0], new byte[0]));
        mock.completeNext();
        producer.flush();
        assertThat(ProducerFlushes.ofThisThread().durableAfter(0)).as("sent before a clean flush").isTrue();

        producer.send(new ProducerRecord<>("out", 0, new byte[0], new byte[0]));
        mock.errorNext(new org.apache.kafka.common.errors.TimeoutException("expired"));
        producer.flush();
        assertThat(ProducerFlushes.ofThisThread().durableAfter(1)).as("the send after flush 1 failed").isFalse();
    }
}
