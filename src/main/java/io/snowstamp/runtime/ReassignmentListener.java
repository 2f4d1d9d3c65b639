package io.snowstamp.runtime;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.common.TopicPartition;

import java.util.Collection;
import java.util.function.Consumer;

/** Kafka Streams' rebalance listener, after {@code reassigned} is told each partition given, taken or lost. */
final class ReassignmentListener implements ConsumerRebalanceListener {
    private final ConsumerRebalanceListener streams;
    private final Consumer<Collection<TopicPartition>> reassigned;

    ReassignmentListener(ConsumerRebalanceListener streams, Consumer<Collection<TopicPartition>> reassigned) {
        this.streams = streams;
        this.reassigned = reassigned;
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        reassigned.accept(partitions);
        streams.onPartitionsRevoked(partitions);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        reassigned.accept(partitions);
        streams.onPartitionsAssigned(partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        reassigned.accept(partitions);
        streams.onPartitionsLost(partitions);
    }
}
