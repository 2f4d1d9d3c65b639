package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;

/**
 * The output topic has another partition count than when the task's state was written: tags would
 * now hash to other partitions, whose state and output do not know their numbers, and could start
 * over. The task refuses to start.
 */
public final class PartitionsChangedException extends SnowstampException {
    private final int partition;
    private final int stored;
    private final int configured;

    public PartitionsChangedException(int partition, int stored, int configured) {
        super("sequence partition " + partition + ": the state was written for " + stored + " output partitions, the output topic"
                + " now has " + configured + ": tags would move to partitions that do not know their numbers and could repeat them;"
                + " restore the partition count, or move to a new output topic with tags created above their old max_id"
                + " (snowstamp tags list)");
        this.partition = partition;
        this.stored = stored;
        this.configured = configured;
    }

    public int partition() {
        return partition;
    }

    public int stored() {
        return stored;
    }

    public int configured() {
        return configured;
    }
}
