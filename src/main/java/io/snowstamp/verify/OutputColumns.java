package io.snowstamp.verify;

/**
 * One output partition's records as parallel primitive columns, one entry per record: the ID (-1
 * when unstamped), the offset, and with a source topic the provenance (source partition as runs,
 * source offset). No object per record, which is what lets ten million records fit in well under
 * 1 GiB. The dead letters use the same columns without IDs. Not thread-safe.
 */
final class OutputColumns {
    /** Source partition of a record whose provenance does not point into the source. */
    static final int NOT_A_SOURCE_RECORD = -1;

    final int partition;
    long lastOffset = -1;
    long lastId;
    long stamped;
    long decreases;
    final LongList ids = new LongList();
    final LongList offsets = new LongList();
    final IntRunList srcPartitions;
    final LongList srcOffsets;

    OutputColumns(int partition, boolean withSource) {
        this.partition = partition;
        this.srcPartitions = withSource ? new IntRunList() : null;
        this.srcOffsets = withSource ? new LongList() : null;
    }

    int records() {
        return ids.size();
    }

    /** Entries in the provenance columns (the dead letters keep no IDs). */
    int provenanceCount() {
        return srcOffsets.size();
    }

    /** Records that the provenance points at a source record. */
    void addSource(int srcPartition, long srcOffset) {
        srcPartitions.add(srcPartition);
        srcOffsets.add(srcOffset);
    }

    /** Records that the provenance points at no record of the source. */
    void addNoSource() {
        srcPartitions.add(NOT_A_SOURCE_RECORD);
        srcOffsets.add(-1);
    }
}
