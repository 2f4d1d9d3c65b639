package io.snowstamp.recovery;

import io.snowstamp.state.WorkerState;

/**
 * One record of a worker-state changelog.
 *
 * @param partition changelog partition (the same number as the input partition and the key)
 * @param offset    offset of the record in its changelog partition
 * @param timestamp Kafka record timestamp, Unix millis: NOT when the state was written — Kafka Streams gives a
 *                  changelog record the timestamp of the input record being processed (or of the punctuation)
 * @param key       the store key: the input partition number
 * @param state     the state, or null for a tombstone (snowstamp never writes one, others might)
 */
public record ChangelogEntry(int partition, long offset, long timestamp, int key, WorkerState state) {

    /** When the writer wrote this state ({@link WorkerState#writtenAt()}), or null when unknown (format version 1, tombstone). */
    public Long writtenAt() {
        return state == null || state.writtenAt() == 0 ? null : state.writtenAt();
    }
}
