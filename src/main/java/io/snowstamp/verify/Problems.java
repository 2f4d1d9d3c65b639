package io.snowstamp.verify;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The problem examples of one {@link Verifier} run: kept up to {@link Verifier#MAX_PROBLEMS} per
 * kind while checking, each formatted only when the report is built, then shared round-robin
 * between the kinds. Holds the topic names because every example names its records by them.
 */
final class Problems {

    /** The kinds of problem, in the order the report lists them. */
    enum Kind { DUPLICATE, MISSING, EXTRA, DECREASE, UNSTAMPED }

    /** One example; its text is built only if the report lists it. */
    interface Problem {
        String text();
    }

    /** Output records listed per duplicate ID or per stamped-again source record. */
    private static final int MAX_LOCATIONS = 4;
    private static final int MAX_HEADER_IN_MESSAGE = 40;

    private final String outputTopic;
    private final String sourceTopic;
    private final Map<Kind, List<Problem>> problems = new EnumMap<>(Kind.class);

    Problems(String outputTopic, String sourceTopic) {
        this.outputTopic = outputTopic;
        this.sourceTopic = sourceTopic;
        for (Kind kind : Kind.values()) {
            problems.put(kind, new ArrayList<>());
        }
    }

    boolean wants(Kind kind) {
        return problems.get(kind).size() < Verifier.MAX_PROBLEMS;
    }

    /** Keeps an example while its kind has room; the problem is built only then. */
    void add(Kind kind, Supplier<Problem> problem) {
        if (wants(kind)) {
            problems.get(kind).add(problem.get());
        }
    }

    /** The examples kept of one kind, in the order they were added. */
    List<Problem> of(Kind kind) {
        return problems.get(kind);
    }

    /**
     * Up to {@link Verifier#MAX_PROBLEMS} examples, shared round-robin between the kinds found so
     * each is represented, listed kind by kind.
     */
    List<String> select() {
        Kind[] kinds = Kind.values();
        int[] quota = new int[kinds.length];
        int total = 0;
        boolean more = true;
        while (more && total < Verifier.MAX_PROBLEMS) {
            more = false;
            for (int k = 0; k < kinds.length && total < Verifier.MAX_PROBLEMS; k++) {
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

    String outputLocation(int partition, long offset) {
        return outputTopic + "-" + partition + "@" + offset;
    }

    static Problem message(String text) {
        return () -> text;
    }

    static String abbreviate(String header) {
        return header.length() <= MAX_HEADER_IN_MESSAGE ? header : header.substring(0, MAX_HEADER_IN_MESSAGE) + "...";
    }

    /** An example for an ID seen twice; the merge counts further copies, {@link #locate} adds where. */
    DuplicateExample duplicate(long id) {
        return new DuplicateExample(id);
    }

    /** An example for a source record stamped more than once ({@code inSource}) or not in the source at all. */
    RefExample ref(int srcPartition, long srcOffset, int stampings, boolean inSource) {
        return new RefExample(srcPartition, srcOffset, stampings, inSource);
    }

    /** The first few output records of an example, and how many there are. */
    final class Locations {
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

    final class DuplicateExample implements Problem {
        final long id;
        long copies = 2;
        final Locations locations = new Locations();

        private DuplicateExample(long id) {
            this.id = id;
        }

        @Override
        public String text() {
            return copies == 2
                    ? "duplicate id " + id + " at " + locations.format(" and ", copies)
                    : "duplicate id " + id + " " + copies + " times: " + locations.format(", ", copies);
        }
    }

    final class RefExample implements Problem {
        final int srcPartition;
        final long srcOffset;
        final int stampings;
        final boolean inSource;
        final Locations locations = new Locations();

        private RefExample(int srcPartition, long srcOffset, int stampings, boolean inSource) {
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
