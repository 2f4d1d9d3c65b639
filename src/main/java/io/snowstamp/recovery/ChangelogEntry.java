package io.snowstamp.recovery;

import io.snowstamp.state.WorkerState;

/**
 * One record of a worker-state changelog.
 *
 * @param partition changelog partition (the same number as the input partition and the key)
 * @param offset    offset of the record in its changelog partition
 * @param timestamp record timestamp, Unix millis (when Kafka Streams wrote it)
 * @param key       the store key: the input partition number
 * @param state     the state, or null for a tombstone (snowstamp never writes one, others might)
 */
public record ChangelogEntry(int partition, long offset, long timestamp, int key, WorkerState state) {
}
