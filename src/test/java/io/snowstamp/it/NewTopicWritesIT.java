package io.snowstamp.it;

import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writing to a topic right after {@link TopicAdmin#apply} created it loses nothing. On the 4.3.1
 * broker a batch refused because the new partition's leader is not open yet can be overtaken by the
 * next batch and is then retried with OUT_OF_ORDER_SEQUENCE_NUMBER until it expires (KAFKA-15591):
 * {@code bench --partitions 64} lost records that way before {@code apply} waited for the leaders.
 */
@Tag("integration")
@Timeout(300)
class NewTopicWritesIT extends OnSharedBroker {
    private static final int PARTITIONS = 64;
    private static final int PER_PARTITION = 200;
    private static final int TOPICS = 4;

    @Test
    void shouldTakeEveryRecordWrittenRightAfterApplyCreatedTheTopic() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            for (int round = 0; round < TOPICS; round++) {
                String topic = TestBroker.unique("fresh");
                assertThat(TopicAdmin.apply(admin, List.of(new TopicSpec(topic, PARTITIONS, (short) 1, Map.of()))))
                        .containsExactly("created " + topic + " partitions=" + PARTITIONS + " replication.factor=1 min.insync.replicas=1");
                ConcurrentLinkedQueue<Exception> failures = new ConcurrentLinkedQueue<>();
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(eagerIdempotentProducer())) {
                    for (int n = 0; n < PER_PARTITION; n++) {
                        for (int p = 0; p < PARTITIONS; p++) {
                            producer.send(new ProducerRecord<>(topic, p, null, ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8)),
                                    (metadata, e) -> {
                                        if (e != null) {
                                            failures.add(e);
                                        }
                                    });
                        }
                    }
                    producer.flush();
                }
                assertThat(failures).as("sends that failed on new topic %s", topic).isEmpty();
                assertThat(endOffsets(admin, topic)).as("records per partition of %s", topic)
                        .hasSize(PARTITIONS).allSatisfy((tp, end) -> assertThat(end).isEqualTo(PER_PARTITION));
            }
        }
    }

    /** Many small in-flight requests per partition from the first moment, and a short delivery timeout instead of an endless retry. */
    private static Properties eagerIdempotentProducer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "256");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e
                : admin.listOffsets(request).all().get(60, TimeUnit.SECONDS).entrySet()) {
            ends.put(e.getKey(), e.getValue().offset());
        }
        return ends;
    }
}
