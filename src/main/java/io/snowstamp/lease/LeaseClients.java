package io.snowstamp.lease;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;

import java.util.Properties;

/**
 * The lease verifier's own three clients, with the settings it forces on them. Apart from {@link LeaseVerifier}
 * because each forced setting has its own reason, and the verifier's job is reading leases back, not tuning clients.
 * The caller owns and closes the clients.
 */
record LeaseClients(Admin admin, Consumer<byte[], byte[]> consumer, Producer<byte[], byte[]> producer) {

    /**
     * @param client   connection settings for the admin client
     * @param consumer a group-less byte-array consumer's settings; {@code read_committed} is forced
     * @param producer a byte-array producer's settings (acks=all)
     */
    static LeaseClients open(Properties client, Properties consumer, Properties producer, String clientId) {
        return new LeaseClients(Admin.create(adminProperties(client, clientId)),
                new KafkaConsumer<>(readerProperties(consumer, clientId)), new KafkaProducer<>(writerProperties(producer, clientId)));
    }

    /** The admin client's settings: {@code client}'s, named. */
    static Properties adminProperties(Properties client, String clientId) {
        Properties adminProps = new Properties();
        adminProps.putAll(client);
        adminProps.put("client.id", clientId + "-lease-admin");
        return adminProps;
    }

    /** The reader's settings: {@code consumer}'s, with what the lease's reads need forced. */
    static Properties readerProperties(Properties consumer, String clientId) {
        Properties consumerProps = new Properties();
        consumerProps.putAll(consumer);
        consumerProps.put("client.id", clientId + "-lease-reader");
        consumerProps.put("isolation.level", "read_committed");
        consumerProps.put("enable.auto.commit", "false");
        // a position out of range (the log's start moved past it: retention, a recreated topic) is read again from the
        // start, never skipped to the end: a skipped record could be a newer lease or a reservation
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.remove("group.id");
        // a fetch the broker holds open for new data (Kafka's default: up to 500 ms) keeps the next one from starting, and the
        // next one is what reads a newly taken lease back: a round that had to wait for it took 0.4-0.7 s while hundreds of
        // leases were taken at once, and every first confirmation waited for it. Idle, the reader fetches only within rounds
        consumerProps.put("fetch.max.wait.ms", "10");
        return consumerProps;
    }

    /** The writer's settings: {@code producer}'s, acks=all forced. */
    static Properties writerProperties(Properties producer, String clientId) {
        Properties producerProps = new Properties();
        producerProps.putAll(producer);
        producerProps.put("client.id", clientId + "-lease-writer");
        producerProps.put("acks", "all");
        // the tasks of a rebalance take their leases within milliseconds of each other: a few ms of linger sends
        // them in a handful of requests instead of one each (at 1,024 partitions, ~1,000 requests), against a
        // takeover wait of a term
        producerProps.put("linger.ms", "5");
        return producerProps;
    }
}
