package io.snowstamp.verify;

import io.snowstamp.verify.Problems.DuplicateExample;
import io.snowstamp.verify.Problems.Kind;
import io.snowstamp.verify.Problems.Problem;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Finds IDs issued twice across all output partitions by a k-way merge of their ID columns. A
 * partition without decreases is already strictly increasing and is read in place; only a partition
 * with a decrease is copied and sorted, so the merge needs no second copy of the IDs.
 */
final class DuplicateMerge {
    private DuplicateMerge() {
    }

    /**
     * Merges every partition's IDs in ascending order and counts each value equal to the one before
     * it; keeps the first duplicate IDs as examples, in ascending ID order.
     */
    static long countDuplicates(List<OutputColumns> partitions, Problems problems) {
        PriorityQueue<IdCursor> queue = new PriorityQueue<>(Math.max(1, partitions.size()),
                Comparator.comparingLong((IdCursor cursor) -> cursor.current));
        for (OutputColumns out : partitions) {
            IdCursor cursor = new IdCursor(out);
            if (cursor.advance()) {
                queue.add(cursor);
            }
        }
        long duplicates = 0;
        long previous = -1;
        DuplicateExample example = null;
        while (!queue.isEmpty()) {
            IdCursor top = queue.poll();
            long id = top.current;
            if (id == previous) {
                duplicates++;
                if (example != null && example.id == id) {
                    example.copies++;
                } else if (problems.wants(Kind.DUPLICATE)) {
                    example = problems.duplicate(id);
                    problems.of(Kind.DUPLICATE).add(example);
                }
            }
            previous = id;
            if (top.advance()) {
                queue.add(top);
            }
        }
        return duplicates;
    }

    /** Finds the output records carrying each duplicate ID listed as an example. */
    static void locateExamples(List<OutputColumns> partitions, Problems problems) {
        List<Problem> examples = problems.of(Kind.DUPLICATE);
        if (examples.isEmpty()) {
            return;
        }
        // countDuplicates added them in ascending ID order
        long[] ids = examples.stream().mapToLong(example -> ((DuplicateExample) example).id).toArray();
        long min = ids[0];
        long max = ids[ids.length - 1];
        for (OutputColumns out : partitions) {
            for (int i = 0; i < out.records(); i++) {
                long id = out.ids.get(i);
                if (id >= min && id <= max) {
                    int k = Arrays.binarySearch(ids, id);
                    if (k >= 0) {
                        ((DuplicateExample) examples.get(k)).locations.add(out.partition, out.offsets.get(i));
                    }
                }
            }
        }
    }

    /** Reads one partition's stamped IDs in ascending order. */
    private static final class IdCursor {
        private final LongList ids;
        private final long[] sorted;
        private final int size;
        private int position;
        long current;

        IdCursor(OutputColumns out) {
            if (out.decreases == 0) {
                // strictly increasing already, once the unstamped (-1) entries are skipped
                ids = out.ids;
                sorted = null;
                size = out.ids.size();
            } else {
                ids = null;
                sorted = new long[Math.toIntExact(out.stamped)];
                int n = 0;
                for (int i = 0; i < out.ids.size(); i++) {
                    long id = out.ids.get(i);
                    if (id >= 0) {
                        sorted[n++] = id;
                    }
                }
                Arrays.sort(sorted);
                size = n;
            }
        }

        boolean advance() {
            if (sorted != null) {
                if (position < size) {
                    current = sorted[position++];
                    return true;
                }
                return false;
            }
            while (position < size) {
                long id = ids.get(position++);
                if (id >= 0) {
                    current = id;
                    return true;
                }
            }
            return false;
        }
    }
}
