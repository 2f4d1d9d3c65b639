package io.snowstamp.recovery;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What changed from one changelog record of a partition to the next: the audit trail that
 * {@code changelog history} prints. A pure function of the two states.
 *
 * @param kinds       machine-readable change kinds, in a fixed order: {@code first}, {@code tombstone},
 *                    {@code layout}, {@code worker}, {@code lease}, {@code epoch-back}, {@code holder},
 *                    {@code lastId}, {@code lastId-back}, {@code reservedUntil}, {@code reservedUntil-back},
 *                    {@code heartbeat}, {@code none}. The {@code -back} kinds mean a value went down:
 *                    never done by the stamper, a sign of a manual write or a restored old backup.
 * @param description the same for a person, e.g. {@code new lease: epoch 1 -> 2 taken by b/t1 (was a/t1)}
 */
public record StateChange(List<String> kinds, String description) {

    /**
     * @param previous the previous record's state of the same partition; null for the first record
     *                 (or after a tombstone)
     * @param next     this record's state; null for a tombstone
     * @param layout   decodes IDs into times; for a jump's size in milliseconds
     */
    public static StateChange between(WorkerState previous, WorkerState next, IdLayout layout) {
        List<String> kinds = new ArrayList<>();
        List<String> text = new ArrayList<>();
        if (next == null) {
            return new StateChange(List.of("tombstone"), "tombstone: the state of this partition was deleted");
        }
        if (previous == null) {
            kinds.add("first");
            text.add("first state: epoch " + next.epoch() + " held by " + holder(next.holder())
                    + ", lastId " + id(layout, next.lastId()) + ", reservedUntil " + id(layout, next.reservedUntil()));
            return new StateChange(List.copyOf(kinds), String.join("; ", text));
        }
        if (!previous.layoutFingerprint().equals(next.layoutFingerprint())) {
            kinds.add("layout");
            text.add("layout " + previous.layoutFingerprint() + " -> " + next.layoutFingerprint());
        }
        if (previous.workerId() != next.workerId()) {
            kinds.add("worker");
            text.add("worker " + previous.workerId() + " -> " + next.workerId());
        }
        if (next.epoch() > previous.epoch()) {
            kinds.add("lease");
            text.add("new lease: epoch " + previous.epoch() + " -> " + next.epoch() + " taken by " + holder(next.holder())
                    + (previous.holder().equals(next.holder()) ? " (same holder)" : " (was " + holder(previous.holder()) + ")"));
        } else if (next.epoch() < previous.epoch()) {
            kinds.add("epoch-back");
            text.add("epoch went BACK " + previous.epoch() + " -> " + next.epoch() + " (holder " + holder(next.holder()) + ")");
        } else if (!previous.holder().equals(next.holder())) {
            kinds.add("holder");
            text.add("holder " + holder(previous.holder()) + " -> " + holder(next.holder()) + " in the same epoch");
        }
        jump(kinds, text, "lastId", previous.lastId(), next.lastId(), layout);
        jump(kinds, text, "reservedUntil", previous.reservedUntil(), next.reservedUntil(), layout);
        if (next.heartbeatAt() != previous.heartbeatAt() && !kinds.contains("lease")) {
            kinds.add("heartbeat");
            text.add("heartbeat " + signedMillis(next.heartbeatAt() - previous.heartbeatAt()));
        }
        if (kinds.isEmpty()) {
            kinds.add("none");
            text.add("no change");
        }
        return new StateChange(List.copyOf(kinds), String.join("; ", text));
    }

    private static void jump(List<String> kinds, List<String> text, String field, long before, long after, IdLayout layout) {
        if (before == after) {
            return;
        }
        boolean back = after < before;
        kinds.add(back ? field + "-back" : field);
        if (before < 0) {
            text.add(field + " set to " + id(layout, after));
            return;
        }
        String size = timeDelta(layout, before, after);
        text.add(field + (back ? " went BACK " : " ") + size + " to " + id(layout, after));
    }

    /** The distance between two IDs in time ({@code +1000ms}), or as a number when an ID does not decode. */
    private static String timeDelta(IdLayout layout, long before, long after) {
        try {
            return signedMillis(layout.decode(after).wallMillis() - layout.decode(before).wallMillis());
        } catch (IllegalArgumentException e) {
            return (after > before ? "+" : "") + (after - before) + " (as numbers)";
        }
    }

    /** {@code +1500ms}, {@code -20ms}, {@code +0ms} below 10 s; then {@code +14.8s}, {@code +41m11s}, {@code +3h05m}, {@code +2d04h}. */
    static String signedMillis(long millis) {
        String sign = millis >= 0 ? "+" : "-";
        long ms = Math.abs(millis);
        if (ms < 10_000) {
            return sign + ms + "ms";
        } else if (ms < 60_000) {
            return sign + String.format("%d.%ds", ms / 1000, ms % 1000 / 100);
        } else if (ms < 3_600_000) {
            return sign + String.format("%dm%02ds", ms / 60_000, ms % 60_000 / 1000);
        } else if (ms < 86_400_000) {
            return sign + String.format("%dh%02dm", ms / 3_600_000, ms % 3_600_000 / 60_000);
        }
        return sign + String.format("%dd%02dh", ms / 86_400_000, ms % 86_400_000 / 3_600_000);
    }

    /** An ID with its time, {@code none} for -1, or the bare number when it does not decode with the layout. */
    static String id(IdLayout layout, long id) {
        if (id < 0) {
            return "none";
        }
        try {
            return id + " (" + Instant.ofEpochMilli(layout.decode(id).wallMillis()) + ")";
        } catch (IllegalArgumentException e) {
            return Long.toString(id);
        }
    }

    private static String holder(String holder) {
        return holder.isEmpty() ? "nobody" : holder;
    }
}
