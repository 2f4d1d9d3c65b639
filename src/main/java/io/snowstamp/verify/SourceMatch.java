package io.snowstamp.verify;

import io.snowstamp.verify.Problems.Kind;
import io.snowstamp.verify.Problems.Problem;
import io.snowstamp.verify.Problems.RefExample;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Matches the source topic against the provenance of the output and dead-letter records: a source
 * record no one accounts for is missing; a reference to a record the source lacks, and every
 * stamping of a source record after its first, is extra.
 *
 * <p>Once the output is read, {@link #seal} gathers each source partition's referenced offsets into
 * one sorted array (8 bytes per reference); the source is then read in offset order and walks a
 * cursor through that array, so matching holds no map entry per record. Not thread-safe.
 */
final class SourceMatch {
    private final String sourceTopic;
    private final Problems problems;
    private final Map<Integer, SourcePartition> sources = new HashMap<>();
    private SourcePartition lastSource;
    private long missing;
    private long extra;

    SourceMatch(String sourceTopic, Problems problems) {
        this.sourceTopic = sourceTopic;
        this.problems = problems;
    }

    long missing() {
        return missing;
    }

    long extra() {
        return extra;
    }

    /**
     * Gathers the references of {@code withProvenance} (the output partitions and the dead letters):
     * first counting them per source partition (in {@code size}), then filling arrays of exactly
     * that size, sorted.
     */
    void seal(List<OutputColumns> withProvenance) {
        for (OutputColumns out : withProvenance) {
            IntRunList.Reader srcPartitions = out.srcPartitions.reader();
            for (int i = 0; i < out.provenanceCount(); i++) {
                int srcPartition = srcPartitions.next();
                if (srcPartition != OutputColumns.NOT_A_SOURCE_RECORD) {
                    sourcePartition(srcPartition).size++;
                }
            }
        }
        for (SourcePartition source : sources.values()) {
            source.refs = new long[source.size];
            source.size = 0;
        }
        for (OutputColumns out : withProvenance) {
            IntRunList.Reader srcPartitions = out.srcPartitions.reader();
            for (int i = 0; i < out.provenanceCount(); i++) {
                int srcPartition = srcPartitions.next();
                if (srcPartition != OutputColumns.NOT_A_SOURCE_RECORD) {
                    sourcePartition(srcPartition).addRef(out.srcOffsets.get(i));
                }
            }
        }
        for (SourcePartition source : sources.values()) {
            if (!source.sorted) {
                Arrays.sort(source.refs);
            }
        }
    }

    /** One source record, after {@link #seal}; each partition's offsets increasing. */
    void source(int partition, long offset) {
        SourcePartition source = sourcePartition(partition);
        if (offset < 0 || offset <= source.lastOffset) {
            throw new IllegalArgumentException("source partition " + partition + ": offset " + offset
                    + " after " + source.lastOffset + "; each partition's records must come in increasing offset order");
        }
        source.lastOffset = offset;

        // references below this offset point at records the source does not have
        int below = source.cursor;
        while (below < source.size && source.refs[below] < offset) {
            below++;
        }
        settleUnmatched(source, below);

        if (source.cursor < source.size && source.refs[source.cursor] == offset) {
            int end = source.groupEnd();
            int stampings = end - source.cursor;
            if (stampings > 1) {
                extra += stampings - 1;
                problems.add(Kind.EXTRA, () -> problems.ref(partition, offset, stampings, true));
            }
            source.cursor = end;
        } else {
            missing++;
            problems.add(Kind.MISSING, () -> Problems.message("missing: " + sourceTopic + "-" + partition + "@" + offset));
        }
    }

    /** After the last source record: every reference not matched yet points past the source's end. */
    void settleAll() {
        List<SourcePartition> sourcePartitions = new ArrayList<>(sources.values());
        sourcePartitions.sort(Comparator.comparingInt(source -> source.partition));
        for (SourcePartition source : sourcePartitions) {
            settleUnmatched(source, source.size);
        }
    }

    /** Finds the output records behind the stamped-again and not-in-source examples. */
    void locateExamples(List<OutputColumns> partitions) {
        Map<Integer, List<RefExample>> byPartition = new HashMap<>();
        for (Problem problem : problems.of(Kind.EXTRA)) {
            if (problem instanceof RefExample example) {
                byPartition.computeIfAbsent(example.srcPartition, p -> new ArrayList<>()).add(example);
            }
        }
        if (byPartition.isEmpty()) {
            return;
        }
        Map<Integer, long[]> offsetsByPartition = new HashMap<>();
        byPartition.forEach((srcPartition, examples) -> {
            examples.sort(Comparator.comparingLong(example -> example.srcOffset));
            offsetsByPartition.put(srcPartition, examples.stream().mapToLong(example -> example.srcOffset).toArray());
        });
        for (OutputColumns out : partitions) {
            IntRunList.Reader srcPartitions = out.srcPartitions.reader();
            int cachedPartition = OutputColumns.NOT_A_SOURCE_RECORD;
            long[] offsets = null;
            for (int i = 0; i < out.records(); i++) {
                int srcPartition = srcPartitions.next();
                if (srcPartition == OutputColumns.NOT_A_SOURCE_RECORD) {
                    continue;
                }
                if (srcPartition != cachedPartition) {
                    cachedPartition = srcPartition;
                    offsets = offsetsByPartition.get(srcPartition);
                }
                if (offsets != null) {
                    int k = Arrays.binarySearch(offsets, out.srcOffsets.get(i));
                    if (k >= 0) {
                        byPartition.get(srcPartition).get(k).locations.add(out.partition, out.offsets.get(i));
                    }
                }
            }
        }
    }

    /** Counts the references from the cursor up to {@code end} as pointing at records the source lacks. */
    private void settleUnmatched(SourcePartition source, int end) {
        while (source.cursor < end) {
            int groupEnd = source.groupEnd();
            int stampings = groupEnd - source.cursor;
            long offset = source.refs[source.cursor];
            extra += stampings;
            problems.add(Kind.EXTRA, () -> problems.ref(source.partition, offset, stampings, false));
            source.cursor = groupEnd;
        }
    }

    private SourcePartition sourcePartition(int partition) {
        SourcePartition source = lastSource;
        if (source == null || source.partition != partition) {
            source = sources.computeIfAbsent(partition, SourcePartition::new);
            lastSource = source;
        }
        return source;
    }

    private static final class SourcePartition {
        private static final long[] NONE = new long[0];

        final int partition;
        long lastOffset = -1;
        /** The offsets output records point at, sorted; the same offset once per stamping. */
        long[] refs = NONE;
        int size;
        boolean sorted = true;
        /** refs before this index are settled. */
        int cursor;

        SourcePartition(int partition) {
            this.partition = partition;
        }

        void addRef(long offset) {
            if (size > 0 && refs[size - 1] > offset) {
                sorted = false;
            }
            refs[size++] = offset;
        }

        /** The index after the run of references equal to the one at the cursor. */
        int groupEnd() {
            int end = cursor + 1;
            while (end < size && refs[end] == refs[cursor]) {
                end++;
            }
            return end;
        }
    }
}
