package io.snowstamp.verify;

import static io.snowstamp.verify.Problems.abbreviate;
import static io.snowstamp.verify.Problems.message;

import io.snowstamp.state.IdHeader;
import io.snowstamp.verify.Problems.Kind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

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
 *
 * <p>This class is the intake: call order, header decoding, per-partition order and decreases. It
 * stores records in {@link OutputColumns}, leaves duplicates to {@link DuplicateMerge}, missing and
 * extra source records to {@link SourceMatch}, and the wording of examples to {@link Problems}.
 */
public final class Verifier {

    /** The most examples {@link VerifyReport#problems()} lists. */
    public static final int MAX_PROBLEMS = 20;

    /** Names the output topic in examples when the {@link #Verifier(String) one-argument constructor} is used. */
    public static final String DEFAULT_OUTPUT_LABEL = "output";

    private enum Phase { OUTPUT, SOURCE, FINISHED }

    private enum Provenance { OK, MISSING, UNPARSABLE, OTHER_TOPIC }

    private final String sourceTopic;

    private final Map<Integer, OutputColumns> outputs = new HashMap<>();
    private OutputColumns lastOutput;
    /** Provenance of the dead letters, kept like an output partition's (without IDs). */
    private final OutputColumns dead = new OutputColumns(-1, true);
    private long deadLetters;
    private final Problems problems;
    /** Null without a source topic. */
    private final SourceMatch match;

    private Phase phase = Phase.OUTPUT;

    private long records;
    private long unstamped;
    private long decreases;
    /** Output records and dead letters whose provenance points at no record of the source. */
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
        Objects.requireNonNull(outputTopic, "outputTopic");
        if (sourceTopic != null && sourceTopic.isEmpty()) {
            throw new IllegalArgumentException("sourceTopic is empty; pass null when there is no source");
        }
        this.sourceTopic = sourceTopic;
        this.problems = new Problems(outputTopic, sourceTopic);
        this.match = sourceTopic == null ? null : new SourceMatch(sourceTopic, problems);
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
            dead.addSource(srcPartition, srcOffset);
        } else {
            extra++;
            String from = srcTopic == null || srcPartition < 0 || srcOffset < 0 ? "no source headers"
                    : "source " + srcTopic + "-" + srcPartition + "@" + srcOffset;
            problems.add(Kind.EXTRA, () -> message("extra: a dead letter with " + from + " is not a record of " + sourceTopic));
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
        match.source(partition, offset);
        sourceRecords++;
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
        List<OutputColumns> partitions = sortedOutputs();
        if (match != null) {
            match.settleAll();
            match.locateExamples(partitions);
        }
        long duplicates = DuplicateMerge.countDuplicates(partitions, problems);
        DuplicateMerge.locateExamples(partitions, problems);

        long missing = match == null ? 0 : match.missing();
        long allExtra = extra + (match == null ? 0 : match.extra());
        return new VerifyReport(records, duplicates, missing, allExtra, decreases, unstamped,
                sourceRecords, problems.select());
    }

    // ---- output records ------------------------------------------------------------------

    private void accept(int partition, long offset, long id, String idHeader,
                        Provenance provenance, String srcText, int srcPartition, long srcOffset) {
        if (phase != Phase.OUTPUT) {
            throw new IllegalStateException("output(...) called after " + (phase == Phase.SOURCE ? "source(...)" : "finish()"));
        }
        requirePartition(partition);
        OutputColumns out = outputPartition(partition);
        if (offset < 0 || offset <= out.lastOffset) {
            throw new IllegalArgumentException("output partition " + partition + ": offset " + offset
                    + " after " + out.lastOffset + "; each partition's records must come in increasing offset order");
        }
        out.lastOffset = offset;
        records++;

        if (id < 0) {
            unstamped++;
            problems.add(Kind.UNSTAMPED, () -> message("unstamped: " + problems.outputLocation(partition, offset)
                    + (idHeader == null ? " has no snowstamp-id header"
                    : " has an unparsable snowstamp-id header \"" + abbreviate(idHeader) + "\"")));
        } else {
            if (out.stamped > 0 && id <= out.lastId) {
                long before = out.lastId;
                out.decreases++;
                decreases++;
                problems.add(Kind.DECREASE, () -> message("decrease in partition " + partition
                        + " at offset " + offset + ": " + id + " after " + before));
            }
            out.lastId = id;
            out.stamped++;
        }
        out.ids.add(id < 0 ? -1 : id);
        out.offsets.add(offset);

        if (sourceTopic != null) {
            if (provenance == Provenance.OK) {
                out.addSource(srcPartition, srcOffset);
            } else {
                extra++;
                out.addNoSource();
                problems.add(Kind.EXTRA, () -> message("extra: " + problems.outputLocation(partition, offset) + switch (provenance) {
                    case MISSING -> " has no snowstamp-src header";
                    case UNPARSABLE -> " has an unparsable snowstamp-src header \"" + abbreviate(srcText) + "\"";
                    default -> " comes from " + srcText + "-" + srcPartition + "@" + srcOffset
                            + ", not from " + sourceTopic;
                }));
            }
        }
    }

    private OutputColumns outputPartition(int partition) {
        OutputColumns out = lastOutput;
        if (out == null || out.partition != partition) {
            out = outputs.computeIfAbsent(partition, p -> new OutputColumns(p, sourceTopic != null));
            lastOutput = out;
        }
        return out;
    }

    private List<OutputColumns> sortedOutputs() {
        List<OutputColumns> sorted = new ArrayList<>(outputs.values());
        sorted.sort(Comparator.comparingInt(out -> out.partition));
        return sorted;
    }

    /** Once the output is read, hands its provenance (and the dead letters') to the source match. */
    private void seal() {
        if (match != null) {
            List<OutputColumns> partitions = sortedOutputs();
            partitions.add(dead);       // dead letters account for source records too
            match.seal(partitions);
        }
    }

    // ---- parsing -------------------------------------------------------------------------

    /**
     * The non-negative decimal number in {@code text[from, to)}, or -1 when that range is empty,
     * holds anything but ASCII digits (signs included), or exceeds {@link Long#MAX_VALUE}: the
     * verifier reports such a header as unstamped or unparsable rather than failing.
     */
    static long parseDecimal(String text, int from, int to) {
        try {
            return IdHeader.parse(text, from, to);
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    private static void requirePartition(int partition) {
        if (partition < 0) {
            throw new IllegalArgumentException("partition " + partition + " is negative");
        }
    }
}
