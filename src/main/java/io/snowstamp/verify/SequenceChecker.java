package io.snowstamp.verify;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks the output of sequence mode ({@code id.mode=sequence}) tag by tag: no number issued twice
 * for a tag, numbers strictly increasing in output order (offset order within a partition), and how
 * many gaps there are (numbers skipped, as after a crash — not an error).
 *
 * <p>Pure Java: a reader feeds it the headers of each output record, each partition in increasing
 * offset order (partitions may interleave), then calls {@link #finish()} once. Memory: 8 bytes per
 * record (the numbers, in chunked primitive lists, one per tag) plus a few objects per tag; a tag
 * whose numbers only increase is never copied or sorted. Not thread-safe.
 */
public final class SequenceChecker {
    private static final int MAX_PROBLEMS = Verifier.MAX_PROBLEMS;

    private final String outputTopic;
    private final Map<String, TagNumbers> tags = new HashMap<>();
    private final List<String> problems = new ArrayList<>();
    private long records;
    private long unstamped;
    private boolean finished;

    /** @param outputTopic the topic checked, used only to name records in examples */
    public SequenceChecker(String outputTopic) {
        this.outputTopic = outputTopic;
    }

    /** Per tag: the numbers in output order, and the last one per partition. */
    private static final class TagNumbers {
        final LongList numbers = new LongList();
        final Map<Integer, Long> lastByPartition = new HashMap<>(2);
        long decreases;
    }

    /**
     * Result for one tag.
     *
     * @param first      lowest number, -1 when none
     * @param last       highest number, -1 when none
     * @param gaps       places where the numbers, sorted and without repeats, jump by more than one
     * @param skipped    numbers between first and last that no record carries
     * @param duplicates records whose number an earlier record of the tag already had
     * @param decreases  records whose number is not above the previous one of the tag in the same partition
     * @param partitions output partitions the tag appeared in (one, unless the partition count changed)
     */
    public record TagResult(String tag, long records, long first, long last, long gaps, long skipped, long duplicates,
                            long decreases, List<Integer> partitions) {
        /** {@code tag order: records=N numbers=A..B gaps=G skipped=S duplicates=D decreases=X partitions=[p]} */
        public String line() {
            return "tag " + tag + ": records=" + records + " numbers=" + first + ".." + last + " gaps=" + gaps + " skipped=" + skipped
                    + " duplicates=" + duplicates + " decreases=" + decreases + " partitions=" + partitions;
        }
    }

    /**
     * What {@link #finish()} found.
     *
     * @param tags       per tag, sorted by tag
     * @param unstamped  records without a {@code snowstamp-tag} header or a decimal {@code snowstamp-id}
     * @param problems   up to {@value Verifier#MAX_PROBLEMS} examples
     */
    public record Report(List<TagResult> tags, long records, long duplicates, long decreases, long unstamped, long splitTags,
                         long gaps, List<String> problems) {
        public boolean clean() {
            return duplicates == 0 && decreases == 0 && unstamped == 0 && splitTags == 0;
        }
    }

    /**
     * One output record, from its raw headers: {@code idHeader} is {@code snowstamp-id} as decimal
     * ASCII (null, a sign or any non-digit makes the record unstamped).
     */
    public void output(int partition, long offset, String tag, String idHeader) {
        output(partition, offset, tag, idHeader == null ? -1 : Verifier.parseDecimal(idHeader, 0, idHeader.length()));
    }

    /**
     * One output record.
     *
     * @param tag    the {@code snowstamp-tag} header, or null when missing
     * @param number the decoded {@code snowstamp-id}, negative when missing or not a decimal number
     */
    public void output(int partition, long offset, String tag, long number) {
        if (finished) {
            throw new IllegalStateException("output(...) called after finish()");
        }
        records++;
        if (tag == null || number < 0) {
            unstamped++;
            problem("unstamped: " + outputTopic + "-" + partition + "@" + offset + " has "
                    + (tag == null ? "no snowstamp-tag header" : "no decimal snowstamp-id header"));
            return;
        }
        TagNumbers numbers = tags.computeIfAbsent(tag, ignored -> new TagNumbers());
        Long previous = numbers.lastByPartition.put(partition, number);
        if (previous != null && number <= previous) {
            numbers.decreases++;
            problem("decrease: tag " + tag + " in " + outputTopic + "-" + partition + " at offset " + offset + ": " + number
                    + " after " + previous);
        }
        numbers.numbers.add(number);
    }

    /** Completes the checks. Call once, last. */
    public Report finish() {
        if (finished) {
            throw new IllegalStateException("finish() called twice");
        }
        finished = true;
        List<TagResult> results = new ArrayList<>();
        long duplicates = 0;
        long decreases = 0;
        long split = 0;
        long gaps = 0;
        for (Map.Entry<String, TagNumbers> entry : new TreeMap<>(tags).entrySet()) {
            TagResult result = check(entry.getKey(), entry.getValue());
            results.add(result);
            duplicates += result.duplicates();
            decreases += result.decreases();
            gaps += result.gaps();
            if (result.partitions().size() > 1) {
                split++;
                problem("split: tag " + result.tag() + " is in partitions " + result.partitions()
                        + " (did the output partition count change?)");
            }
        }
        return new Report(results, records, duplicates, decreases, unstamped, split, gaps, problems);
    }

    private TagResult check(String tag, TagNumbers numbers) {
        int size = numbers.numbers.size();
        long[] sorted = null;
        if (numbers.decreases > 0 || numbers.lastByPartition.size() > 1) {
            sorted = new long[size];
            for (int i = 0; i < size; i++) {
                sorted[i] = numbers.numbers.get(i);
            }
            Arrays.sort(sorted);
        }
        long duplicates = 0;
        long gaps = 0;
        long skipped = 0;
        long first = -1;
        long previous = -1;
        long reported = -1;
        for (int i = 0; i < size; i++) {
            long number = sorted == null ? numbers.numbers.get(i) : sorted[i];
            if (i == 0) {
                first = number;
            } else if (number == previous) {
                duplicates++;
                if (reported != number) {
                    reported = number;
                    problem("duplicate: tag " + tag + " number " + number + " is on more than one record");
                }
            } else if (number > previous + 1) {
                gaps++;
                skipped += number - previous - 1;
            }
            previous = number;
        }
        return new TagResult(tag, size, first, previous, gaps, skipped, duplicates, numbers.decreases,
                List.copyOf(new TreeSet<>(numbers.lastByPartition.keySet())));
    }

    private void problem(String text) {
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(text);
        }
    }
}
