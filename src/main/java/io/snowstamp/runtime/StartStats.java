package io.snowstamp.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the main consumers did for starting tasks ({@link StartingTasksConsumer}), summed over the stream
 * threads: tests count requests with it, as the task starts' work must grow with batches, not with tasks.
 * Thread-safe.
 */
public final class StartStats {
    private final AtomicLong committedRequests = new AtomicLong();
    private final AtomicLong committedPartitions = new AtomicLong();
    private final AtomicLong held = new AtomicLong();
    /** Input partitions caught up without a record delivered (the stall watch's, {@link UndeliveredTails}). */
    private final UndeliveredTails undelivered = new UndeliveredTails();

    UndeliveredTails undelivered() {
        return undelivered;
    }

    void committed(long requests, long partitions) {
        committedRequests.addAndGet(requests);
        committedPartitions.addAndGet(partitions);
    }

    void held(long partitions) {
        held.addAndGet(partitions);
    }

    /** Committed-offset requests the main consumers sent to the group coordinator. */
    public long committedRequests() {
        return committedRequests.get();
    }

    /** Partitions whose committed offsets Kafka Streams asked for (one call per task start). */
    public long committedPartitions() {
        return committedPartitions.get();
    }

    /** Times a started task's input was held back while its lease waited out the previous owner. */
    public long held() {
        return held.get();
    }

    @Override
    public String toString() {
        return "committed offsets of " + committedPartitions() + " partitions in " + committedRequests() + " requests; "
                + held() + " partitions held back for their leases";
    }
}
