package io.snowstamp.verify;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * IDs that appear in more than one of several stamped topics: the check before the outputs of two
 * deployments end up in one table. Each topic's own duplicates are {@link Verifier}'s job; this
 * counts an ID once for every topic beyond the first that holds it. Memory: 8 bytes per ID.
 */
public final class CrossTopicCheck {
    private final List<String> topics;
    private final List<LongList> ids = new ArrayList<>();

    /** @param topics the topics, in the order their IDs are {@link #add added} */
    public CrossTopicCheck(List<String> topics) {
        this.topics = List.copyOf(topics);
        topics.forEach(topic -> ids.add(new LongList()));
    }

    /** One stamped record's ID (unstamped records are not passed). */
    public void add(int topic, long id) {
        ids.get(topic).add(id);
    }

    /**
     * @param shared   IDs found in more than one topic, counted once per extra topic
     * @param examples up to {@link Verifier#MAX_PROBLEMS} lines {@code id N in A and B}
     */
    public record Result(long shared, List<String> examples) {
    }

    public Result finish() {
        long[][] sorted = new long[ids.size()][];
        for (int t = 0; t < sorted.length; t++) {
            LongList list = ids.get(t);
            long[] values = new long[list.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = list.get(i);
            }
            Arrays.sort(values);
            sorted[t] = values;
        }
        int[] at = new int[sorted.length];
        long shared = 0;
        List<String> examples = new ArrayList<>();
        while (true) {
            long lowest = Long.MAX_VALUE;
            for (int t = 0; t < sorted.length; t++) {
                if (at[t] < sorted[t].length) {
                    lowest = Math.min(lowest, sorted[t][at[t]]);
                }
            }
            if (lowest == Long.MAX_VALUE) {
                return new Result(shared, examples);
            }
            List<String> holders = new ArrayList<>();
            for (int t = 0; t < sorted.length; t++) {
                boolean holds = false;
                while (at[t] < sorted[t].length && sorted[t][at[t]] == lowest) {
                    at[t]++;
                    holds = true;
                }
                if (holds) {
                    holders.add(topics.get(t));
                }
            }
            if (holders.size() > 1) {
                shared += holders.size() - 1;
                if (examples.size() < Verifier.MAX_PROBLEMS) {
                    examples.add("shared id " + lowest + " in " + String.join(" and ", holders));
                }
            }
        }
    }
}
