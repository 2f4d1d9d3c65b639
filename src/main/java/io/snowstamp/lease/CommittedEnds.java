package io.snowstamp.lease;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The committed end of each changelog partition a lease round reads up to, asked in one admin request and taken
 * partition by partition. Apart from {@link LeaseVerifier} because its rule is its own: a frozen leader delays only
 * the partitions it leads, which are then not confirmed that round.
 */
final class CommittedEnds {
    private CommittedEnds() {
    }

    /**
     * The committed end (read_committed), and its leader epoch, of each partition whose leader answered before
     * {@code deadline} ({@link System#nanoTime()}); a partition missing from the result was not answered in time.
     *
     * @throws WakeupException when the calling thread is interrupted (its interrupt flag set again)
     */
    static Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> read(Admin admin, Set<TopicPartition> partitions, long deadline) {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        partitions.forEach(tp -> specs.put(tp, OffsetSpec.latest()));
        ListOffsetsResult result = admin.listOffsets(specs, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)
                .timeoutMs((int) LeaseVerifier.TERM.toMillis()));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = new HashMap<>();
        for (TopicPartition tp : partitions) {
            KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo> future = result.partitionResult(tp);
            long wait = Math.max(0, deadline - System.nanoTime());
            try {
                ends.put(tp, future.get(wait, TimeUnit.NANOSECONDS));
            } catch (TimeoutException | ExecutionException e) {
                // this partition's leader did not answer in time: not confirmed this round
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WakeupException();
            }
        }
        return ends;
    }
}
