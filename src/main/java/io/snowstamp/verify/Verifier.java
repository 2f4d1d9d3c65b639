package io.snowstamp.verify;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Checks a stamped topic: no ID issued twice, IDs strictly increasing within each partition, every
 * record stamped, and (given the source topic) every source record stamped exactly once.
 *
 * <p>Pure Java: a reader of the topics feeds it plain values and reads the {@link VerifyReport}.
 * Calls come in this order: any number of {@code output(...)} calls, each partition's records in
 * increasing offset order (partitions may interleave); then, only when a source topic was given, any
 * number of {@link #source(int, long)} calls, each partition in increasing offset order; then
 * {@link #finish()} once. A call out of that order throws {@link IllegalStateException}; an offset
 * not above the previous one of its partition throws {@link IllegalArgumentException}.
 *
 * <p>Memory: about 24 bytes a record with a source and 16 without (ID, output offset and source
 * offset as primitive longs in chunked lists; the source partition of each record as runs), plus,
 * when the source is read, 8 bytes per stamped source reference. No object or string is kept per
 * record. Duplicates are found by merging the partitions' ID sequences, which are already sorted
 * when the partition's IDs increase (only a partition with a decrease is copied and sorted), so ten
 * million records fit in well under 1 GiB of heap. Not thread-safe.
 */
public final class Verifier {

    /** The most examples {@link VerifyReport#problems()} lists. */
    public static final int MAX_PROBLEMS = 20;

    /** Names the output topic in examples when the {@link #Verifier(String) one-argument constructor} is used. */
    public static final String DEFAULT_OUTPUT_LABEL = "output";

    /** Output records listed per duplicate ID or per stamped-again source record. */
    private static final int MAX_LOCATIONS = 4;
    private static final int MAX_HEADER_IN_MESSAGE = 40;

    /** Source partition of an output record whose provenance does not point into the source. */
    private static final int NOT_A_SOURCE_RECORD = -1;

    private enum Phase { OUTPUT, SOURCE, FINISHED }

    private enum Provenance { OK, MISSING, UNPARSABLE, OTHER_TOPIC }

    /** The kinds of problem, in the order the report lists them. */
    private enum Kind { DUPLICATE, MISSING, EXTRA, DECREASE, UNSTAMPED }

    private final String outputTopic;
    private final String sourceTopic;

    private final Map<Integer, OutputPartition> outputs = new HashMap<>();
    private OutputPartition lastOutput;
    private final Map<Integer, SourcePartition> sources = new HashMap<>();
    /** Provenance of the dead letters, kept like an output partition's (without IDs). */
    private final OutputPartition dead = new OutputPartition(-1, true);
    private long deadLetters;
    private SourcePartition lastSource;
    private final Map<Kind, List<Problem>> problems = new EnumMap<>(Kind.class);

    private Phase phase = Phase.OUTPUT;

    private long records;
    private long unstamped;
    private long decreases;
    private long missing;
    private long extra;
    private long sourceRecords;

    /**
     * A verifier whose examples name the output topic {@value #DEFAULT_OUTPUT_LABEL}.
     *
     * @param sourceTopic the input topic the output was stamped from, or null to check the output
     *                    topic alone (then missing and extra are 0 and provenance is not read)
     */
    public Verifier(String sourceTopic) {
        this(DEFAULT_OUTPUT_LABEL, sourceTopic);
    }

    /**
     * @param outputTopic the topic checked, used only to name records in examples; not null
     * @param sourceTopic the input topic the output was stamped from, or null to check the output
     *                    topic alone (then missing and extra are 0 and provenance is not read)
     */
    public Verifier(String outputTopic, String sourceTopic) {
        this.outputTopic = Objects.requireNonNull(outputTopic, "outputTopic");
        if (sourceTopic != null && sourceTopic.isEmpty()) {
            throw new IllegalArgumentException("sourceTopic is empty; pass null when there is no source");
        }
        this.sourceTopic = sourceTopic;
        for (Kind kind : Kind.values()) {
            problems.put(kind, new ArrayList<>());
        }
    }

    /**
     * One output record, from its raw headers.
     *
     * <p>{@code idHeader} is the {@code snowstamp-id} header as decimal ASCII; null, empty, a sign,
     * any non-digit or a value above {@link Long#MAX_VALUE} makes the record unstamped.
     * {@code srcHeader} is {@code snowstamp-src}, {@code topic/partition/offset}, split at its last
     * two slashes; it is read only when a source topic was given. Delegates to the same check as
     * {@link #output(int, long, long, String, int, long)}, keeping the raw text for examples.
     *
     * @param partition output partition, &gt;= 0
     * @param offset    output offset, above the previous one of this partition
     * @param idHeader  the {@code snowstamp-id} header, or null when the record has none
     * @param srcHeader the {@code snowstamp-src} header, or null when the record has none
     */
    public void output(int partition, long offset, String idHeader, String srcHeader) {
        long id = idHeader == null ? -1 : parseDecimal(idHeader, 0, idHeader.length());
        if (sourceTopic == null || srcHeader == null) {
            accept(partition, offset, id, idHeader, Provenance.MISSING, null, -1, -1);
            return;
        }
        int lastSlash = srcHeader.lastIndexOf('/');
        int slash = lastSlash <= 0 ? -1 : srcHeader.lastIndexOf('/', lastSlash - 1);
        long srcPartition = slash <= 0 ? -1 : parseDecimal(srcHeader, slash + 1, lastSlash);
        long srcOffset = slash <= 0 ? -1 : parseDecimal(srcHeader, lastSlash + 1, srcHeader.length());
        if (srcPartition < 0 || srcPartition > Integer.MAX_VALUE || srcOffset < 0) {
            accept(partition, offset, id, idHeader, Provenance.UNPARSABLE, srcHeader, -1, -1);
        } else if (slash == sourceTopic.length() && srcHeader.startsWith(sourceTopic)) {
            accept(partition, offset, id, idHeader, Provenance.OK, null, (int) srcPartition, srcOffset);
        } else {
            accept(partition, offset, id, idHeader, Provenance.OTHER_TOPIC,
                    srcHeader.substring(0, slash), (int) srcPartition, srcOffset);
        }
    }

    /**
     * One output record, from already decoded headers: the form for callers that decode the
     * headers themselves (and for large tests), creating no string per record.
     *
     * @param partition    output partition, &gt;= 0
     * @param offset       output offset, above the previous one of this partition
     * @param id           the decoded {@code snowstamp-id}; negative (by convention -1) when the header
     *                     is missing or unparsable
     * @param srcTopic     topic of the {@code snowstamp-src} header, or null when it is missing
     * @param srcPartition partition of the {@code snowstamp-src} header; negative when it is missing
     * @param srcOffset    offset of the {@code snowstamp-src} header; negative (by convention -1) when
     *                     it is missing. Provenance is ignored when no source topic was given.
     */
    public void output(int partition, long offset, long id, String srcTopic, int srcPartition, long srcOffset) {
        if (srcTopic == null || srcPartition < 0 || srcOffset < 0) {
            accept(partition, offset, id, null, Provenance.MISSING, null, -1, -1);
        } else if (srcTopic.equals(sourceTopic)) {
            accept(partition, offset, id, null, Provenance.OK, null, srcPartition, srcOffset);
        } else {
            accept(partition, offset, id, null, Provenance.OTHER_TOPIC, srcTopic, srcPartition, srcOffset);
        }
    }

    /**
     * One record of the dead-letter topic: an input record the stamper could not stamp and routed
     * there unchanged. It accounts for its source record exactly like a stamped record would (so a
     * record both stamped and dead-lettered is {@code extra}), but has no ID to check. Allowed only
     * with a source topic, before the first {@code source(...)} call; any order across calls.
     *
     * @param srcTopic     {@code __streams.errors.topic} of the dead letter, or null when missing
     * @param srcPartition {@code __streams.errors.partition}, negative when missing
     * @param srcOffset    {@code __streams.errors.offset}, negative when missing
     */
    public void deadLetter(String srcTopic, int srcPartition, long srcOffset) {
        if (sourceTopic == null) {
            throw new IllegalStateException("deadLetter(...) called on a Verifier without a source topic");
        }
        if (phase != Phase.OUTPUT) {
            throw new IllegalStateException("deadLetter(...) called after " + (phase == Phase.SOURCE ? "source(...)" : "finish()"));
        }
        deadLetters++;
        if (srcTopic != null && srcTopic.equals(sourceTopic) && srcPartition >= 0 && srcOffset >= 0) {
            dead.srcPartitions.add(srcPartition);
            dead.srcOffsets.add(srcOffset);
        } else {
            extra++;
            String from = srcTopic == null || srcPartition < 0 || srcOffset < 0 ? "no source headers"
                    : "source " + srcTopic + "-" + srcPartition + "@" + srcOffset;
            addProblem(Kind.EXTRA, () -> message("extra: a dead letter with " + from + " is not a record of " + sourceTopic));
        }
    }

    /** Dead letters seen through {@link #deadLetter}. */
    public long deadLetters() {
        return deadLetters;
    }

    /**
     * One record of the source topic. Allowed only when a source topic was given, after the last
     * {@code output(...)} call.
     *
     * @param partition source partition, &gt;= 0
     * @param offset    source offset, above the previous one of this partition
     */
    public void source(int partition, long offset) {
        if (sourceTopic == null) {
            throw new IllegalStateException("source(...) called on a Verifier without a source topic");
        }
        if (phase == Phase.FINISHED) {
            throw new IllegalStateException("source(...) called after finish()");
        }
        requirePartition(partition);
        if (phase == Phase.OUTPUT) {
            seal();
            phase = Phase.SOURCE;
        }
        SourcePartition source = sourcePartition(partition);
        if (offset < 0 || offset <= source.lastOffset) {
            throw new IllegalArgumentException("source partition " + partition + ": offset " + offset
                    + " after " + source.lastOffset + "; each partition's records must come in increasing offset order");
        }
        source.lastOffset = offset;
        sourceRecords++;

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
                addProblem(Kind.EXTRA, () -> new RefExample(partition, offset, stampings, true));
            }
            source.cursor = end;
        } else {
            missing++;
            addProblem(Kind.MISSING, () -> message("missing: " + sourceTopic + "-" + partition + "@" + offset));
        }
    }

    /** Completes the checks and returns the report. Call once, last. */
    public VerifyReport finish() {
        if (phase == Phase.FINISHED) {
            throw new IllegalStateException("finish() called twice");
        }
        if (phase == Phase.OUTPUT) {
            seal();
        }
        phase = Phase.FINISHED;
        List<OutputPartition> partitions = sortedOutputs();

        List<SourcePartition> sourcePartitions = new ArrayList<>(sources.values());
        sourcePartitions.sort(Comparator.comparingInt(source -> source.partition));
        for (SourcePartition source : sourcePartitions) {
            settleUnmatched(source, source.size);
        }
        locateRefExamples(partitions);

        long duplicates = mergeAndCountDuplicates(partitions);
        locateDuplicateExamples(partitions);

        return new VerifyReport(records, duplicates, missing, extra, decreases, unstamped,
                sourceRecords, selectProblems());
    }

    // ---- output records ------------------------------------------------------------------

    private void accept(int partition, long offset, long id, String idHeader,
                        Provenance provenance, String srcText, int srcPartition, long srcOffset) {
        if (phase != Phase.OUTPUT) {
            throw new IllegalStateException("output(...) called after " + (phase == Phase.SOURCE ? "source(...)" : "finish()"));
        }
        requirePartition(partition);
        OutputPartition out = outputPartition(partition);
        if (offset < 0 || offset <= out.lastOffset) {
            throw new IllegalArgumentException("output partition " + partition + ": offset " + offset
                    + " after " + out.lastOffset + "; each partition's records must come in increasing offset order");
        }
        out.lastOffset = offset;
        records++;

        if (id < 0) {
            unstamped++;
            addProblem(Kind.UNSTAMPED, () -> message("unstamped: " + outputLocation(partition, offset)
                    + (idHeader == null ? " has no snowstamp-id header"
                    : " has an unparsable snowstamp-id header \"" + abbreviate(idHeader) + "\"")));
        } else {
            if (out.stamped > 0 && id <= out.lastId) {
                long before = out.lastId;
                out.decreases++;
                decreases++;
                addProblem(Kind.DECREASE, () -> message("decrease in partition " + partition
                        + " at offset " + offset + ": " + id + " after " + before));
            }
            out.lastId = id;
            out.stamped++;
        }
        out.ids.add(id < 0 ? -1 : id);
        out.offsets.add(offset);

        if (sourceTopic != null) {
            if (provenance == Provenance.OK) {
                out.srcPartitions.add(srcPartition);
                out.srcOffsets.add(srcOffset);
            } else {
                extra++;
                out.srcPartitions.add(NOT_A_SOURCE_RECORD);
                out.srcOffsets.add(-1);
                addProblem(Kind.EXTRA, () -> message("extra: " + outputLocation(partition, offset) + switch (provenance) {
                    case MISSING -> " has no snowstamp-src header";
                    case UNPARSABLE -> " has an unparsable snowstamp-src header \"" + abbreviate(srcText) + "\"";
                    default -> " comes from " + srcText + "-" + srcPartition + "@" + srcOffset
                            + ", not from " + sourceTopic;
                }));
            }
        }
    }

    private OutputPartition outputPartition(int partition) {
        OutputPartition out = lastOutput;
        if (out == null || out.partition != partition) {
            out = outputs.computeIfAbsent(partition, p -> new OutputPartition(p, sourceTopic != null));
            lastOutput = out;
        }
        return out;
    }

    private List<OutputPartition> sortedOutputs() {
        List<OutputPartition> sorted = new ArrayList<>(outputs.values());
        sorted.sort(Comparator.comparingInt(out -> out.partition));
        return sorted;
    }

    // ---- provenance ----------------------------------------------------------------------

    /**
     * Once the output is read, gathers each source partition's referenced offsets into one sorted
     * array: first counting them (in {@code size}), then filling arrays of exactly that size.
     */
    private void seal() {
        if (sourceTopic == null) {
            return;
        }
        List<OutputPartition> partitions = sortedOutputs();
        partitions.add(dead);       // dead letters account for source records too
        for (OutputPartition out : partitions) {
            IntRunList.Reader srcPartitions = out.srcPartitions.reader();
            for (int i = 0; i < out.provenanceCount(); i++) {
                int srcPartition = srcPartitions.next();
                if (srcPartition != NOT_A_SOURCE_RECORD) {
                    sourcePartition(srcPartition).size++;
                }
            }
        }
        for (SourcePartition source : sources.values()) {
            source.refs = new long[source.size];
            source.size = 0;
        }
        for (OutputPartition out : partitions) {
            IntRunList.Reader srcPartitions = out.srcPartitions.reader();
            for (int i = 0; i < out.provenanceCount(); i++) {
                int srcPartition = srcPartitions.next();
                if (srcPartition != NOT_A_SOURCE_RECORD) {
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

    private SourcePartition sourcePartition(int partition) {
        SourcePartition source = lastSource;
        if (source == null || source.partition != partition) {
            source = sources.computeIfAbsent(partition, SourcePartition::new);
            lastSource = source;
        }
        return source;
    }

    /** Counts the references from the cursor up to {@code end} as pointing at records the source lacks. */
    private void settleUnmatched(SourcePartition source, int end) {
        while (source.cursor < end) {
            int groupEnd = source.groupEnd();
            int stampings = groupEnd - source.cursor;
            long offset = source.refs[source.cursor];
            extra += stampings;
            addProblem(Kind.EXTRA, () -> new RefExample(source.partition, offset, stampings, false));
            source.cursor = groupEnd;
        }
    }

    /** Finds the output records behind the stamped-again and not-in-source examples. */
    private void locateRefExamples(List<OutputPartition> partitions) {
        Map<Integer, List<RefExample>> byPartition = new HashMap<>();
        for (Problem problem : problems.get(Kind.EXTRA)) {
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
        for (OutputPartition out : partitions) {
            IntRunList.Reader srcPartitions = out.srcPartitions.reader();
            int cachedPartition = NOT_A_SOURCE_RECORD;
            long[] offsets = null;
            for (int i = 0; i < out.records(); i++) {
                int srcPartition = srcPartitions.next();
                if (srcPartition == NOT_A_SOURCE_RECORD) {
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

    // ---- duplicates ----------------------------------------------------------------------

    /**
     * Merges every partition's IDs in ascending order and counts each value equal to the one
     * before it. A partition without decreases is already strictly increasing and is read in place;
     * only a partition with a decrease is copied and sorted.
     */
    private long mergeAndCountDuplicates(List<OutputPartition> partitions) {
        IdCursor[] heap = new IdCursor[partitions.size()];
        int heapSize = 0;
        for (OutputPartition out : partitions) {
            IdCursor cursor = new IdCursor(out);
            if (cursor.advance()) {
                heap[heapSize++] = cursor;
            }
        }
        for (int i = heapSize / 2 - 1; i >= 0; i--) {
            siftDown(heap, heapSize, i);
        }
        long duplicates = 0;
        long previous = -1;
        DuplicateExample example = null;
        while (heapSize > 0) {
            IdCursor top = heap[0];
            long id = top.current;
            if (id == previous) {
                duplicates++;
                if (example != null && example.id == id) {
                    example.copies++;
                } else if (wants(Kind.DUPLICATE)) {
                    example = new DuplicateExample(id);
                    problems.get(Kind.DUPLICATE).add(example);
                }
            }
            previous = id;
            if (!top.advance()) {
                heap[0] = heap[--heapSize];
                heap[heapSize] = null;
            }
            siftDown(heap, heapSize, 0);
        }
        return duplicates;
    }

    private static void siftDown(IdCursor[] heap, int size, int index) {
        int i = index;
        while (true) {
            int smallest = i;
            int left = 2 * i + 1;
            int right = left + 1;
            if (left < size && heap[left].current < heap[smallest].current) {
                smallest = left;
            }
            if (right < size && heap[right].current < heap[smallest].current) {
                smallest = right;
            }
            if (smallest == i) {
                return;
            }
            IdCursor swap = heap[i];
            heap[i] = heap[smallest];
            heap[smallest] = swap;
            i = smallest;
        }
    }

    /** Finds the output records carrying each duplicate ID listed as an example. */
    private void locateDuplicateExamples(List<OutputPartition> partitions) {
        List<Problem> examples = problems.get(Kind.DUPLICATE);
        if (examples.isEmpty()) {
            return;
        }
        // the merge added them in ascending ID order
        long[] ids = examples.stream().mapToLong(example -> ((DuplicateExample) example).id).toArray();
        long min = ids[0];
        long max = ids[ids.length - 1];
        for (OutputPartition out : partitions) {
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

    // ---- problems ------------------------------------------------------------------------

    private boolean wants(Kind kind) {
        return problems.get(kind).size() < MAX_PROBLEMS;
    }

    /** Keeps an example while its kind has room; the problem is built only then. */
    private void addProblem(Kind kind, Supplier<Problem> problem) {
        if (wants(kind)) {
            problems.get(kind).add(problem.get());
        }
    }

    /**
     * Up to {@link #MAX_PROBLEMS} examples, shared round-robin between the kinds found so each is
     * represented, listed kind by kind.
     */
    private List<String> selectProblems() {
        Kind[] kinds = Kind.values();
        int[] quota = new int[kinds.length];
        int total = 0;
        boolean more = true;
        while (more && total < MAX_PROBLEMS) {
            more = false;
            for (int k = 0; k < kinds.length && total < MAX_PROBLEMS; k++) {
                if (quota[k] < problems.get(kinds[k]).size()) {
                    quota[k]++;
                    total++;
                    more = true;
                }
            }
        }
        List<String> selected = new ArrayList<>(total);
        for (int k = 0; k < kinds.length; k++) {
            for (Problem problem : problems.get(kinds[k]).subList(0, quota[k])) {
                selected.add(problem.text());
            }
        }
        return selected;
    }

    private String outputLocation(int partition, long offset) {
        return outputTopic + "-" + partition + "@" + offset;
    }

    private static Problem message(String text) {
        return () -> text;
    }

    private static String abbreviate(String header) {
        return header.length() <= MAX_HEADER_IN_MESSAGE ? header : header.substring(0, MAX_HEADER_IN_MESSAGE) + "...";
    }

    // ---- parsing -------------------------------------------------------------------------

    /**
     * The non-negative decimal number in {@code text[from, to)}, or -1 when that range is empty,
     * holds anything but ASCII digits (signs included), or exceeds {@link Long#MAX_VALUE}.
     */
    static long parseDecimal(String text, int from, int to) {
        if (from >= to) {
            return -1;
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            int digit = text.charAt(i) - '0';
            if (digit < 0 || digit > 9 || value > (Long.MAX_VALUE - digit) / 10) {
                return -1;
            }
            value = value * 10 + digit;
        }
        return value;
    }

    private static void requirePartition(int partition) {
        if (partition < 0) {
            throw new IllegalArgumentException("partition " + partition + " is negative");
        }
    }

    // ---- per-partition state -------------------------------------------------------------

    private static final class OutputPartition {
        final int partition;
        long lastOffset = -1;
        long lastId;
        long stamped;
        long decreases;
        /** Parallel, one entry per record: ID (-1 when unstamped), offset, and with a source the provenance. */
        final LongList ids = new LongList();
        final LongList offsets = new LongList();
        final IntRunList srcPartitions;
        final LongList srcOffsets;

        OutputPartition(int partition, boolean withSource) {
            this.partition = partition;
            this.srcPartitions = withSource ? new IntRunList() : null;
            this.srcOffsets = withSource ? new LongList() : null;
        }

        int records() {
            return ids.size();
        }

        /** Entries in the provenance lists (the dead letters keep no IDs). */
        int provenanceCount() {
            return srcOffsets.size();
        }
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

    /** Reads one partition's stamped IDs in ascending order. */
    private static final class IdCursor {
        private final LongList ids;
        private final long[] sorted;
        private final int size;
        private int position;
        long current;

        IdCursor(OutputPartition out) {
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

    // ---- examples ------------------------------------------------------------------------

    private interface Problem {
        String text();
    }

    /** The first few output records of an example, and how many there are. */
    private final class Locations {
        private final List<long[]> shown = new ArrayList<>();

        void add(int partition, long offset) {
            if (shown.size() < MAX_LOCATIONS) {
                shown.add(new long[] {partition, offset});
            }
        }

        /**
         * "t-1@7, @9, t-2@3" (a partition named once for consecutive offsets in it) with the given
         * separator, then ", ..." when {@code total} is more than listed.
         */
        String format(String separator, long total) {
            StringBuilder text = new StringBuilder();
            long previousPartition = -1;
            for (long[] location : shown) {
                if (text.length() > 0) {
                    text.append(separator);
                }
                if (location[0] != previousPartition) {
                    text.append(outputTopic).append('-').append(location[0]);
                }
                text.append('@').append(location[1]);
                previousPartition = location[0];
            }
            if (total > shown.size()) {
                text.append(", ...");
            }
            return text.toString();
        }
    }

    private final class DuplicateExample implements Problem {
        final long id;
        long copies = 2;
        final Locations locations = new Locations();

        DuplicateExample(long id) {
            this.id = id;
        }

        @Override
        public String text() {
            return copies == 2
                    ? "duplicate id " + id + " at " + locations.format(" and ", copies)
                    : "duplicate id " + id + " " + copies + " times: " + locations.format(", ", copies);
        }
    }

    private final class RefExample implements Problem {
        final int srcPartition;
        final long srcOffset;
        final int stampings;
        final boolean inSource;
        final Locations locations = new Locations();

        RefExample(int srcPartition, long srcOffset, int stampings, boolean inSource) {
            this.srcPartition = srcPartition;
            this.srcOffset = srcOffset;
            this.stampings = stampings;
            this.inSource = inSource;
        }

        @Override
        public String text() {
            String times = stampings + (stampings == 1 ? " time" : " times");
            return "extra: " + sourceTopic + "-" + srcPartition + "@" + srcOffset
                    + (inSource ? " stamped " + times : " is not in the source but stamped " + times)
                    + " (" + locations.format(", ", stampings) + ")";
        }
    }
}
