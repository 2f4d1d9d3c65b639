package io.snowstamp.recovery;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What {@code changelog import} writes, decided from the file and what the target changelog holds
 * now, before anything is written. A pure function: refusals are thrown, nothing half-done.
 *
 * <p>Rules: every layout in the file must be the configured one; each partition must exist (below
 * the input topic's partition count) and carry the worker the configuration gives it; no
 * partition's high-water mark ({@link WorkerState#highWaterMark()}) may go down; the epoch never
 * goes down either (the written epoch is the larger of the file's and the changelog's). A partition
 * whose epoch and marks would not change ({@link WorkerState#sameMarks}) is not written — the lease
 * details (holder, heartbeat, write time) of the changelog's state are newer than an export's and
 * are no reason to write; partitions the file does not name are kept.
 *
 * @param rows one row per partition that is in the file or in the changelog, in partition order
 */
public record ImportPlan(List<Row> rows) {

    /** What happens to one partition. */
    public enum Action {
        /** the imported state is written */
        WRITE,
        /** the changelog already holds the imported epoch and marks */
        UNCHANGED,
        /** the file has no state for this partition; the changelog's stays */
        KEEP
    }

    /**
     * @param current the changelog's state now, or null
     * @param after   the state after the import (written for {@link Action#WRITE}), never null
     */
    public record Row(int partition, WorkerState current, WorkerState after, Action action) {
    }

    public ImportPlan {
        rows = List.copyOf(rows);
    }

    /**
     * @param current       newest state per partition of the target changelog (empty if it has none)
     * @param configured    the configured ID layout
     * @param workerOffset  {@code id.worker-offset}: partition p has worker {@code workerOffset + p}
     * @param partitions    partition count of the input topic (= of the changelog)
     * @param topic         the target changelog, for messages
     * @throws ImportRefusedException if the import could let an ID be issued twice
     */
    public static ImportPlan plan(StateFile file, Map<Integer, WorkerState> current, IdLayout configured, long workerOffset,
                                  int partitions, String topic) {
        String layout = configured.fingerprint();
        if (!file.header().layout().equals(layout)) {
            throw new ImportRefusedException.LayoutMismatch("the file", file.header().layout(), layout);
        }
        for (Map.Entry<Integer, WorkerState> entry : file.states().entrySet()) {
            int partition = entry.getKey();
            WorkerState state = entry.getValue();
            if (!state.layoutFingerprint().equals(layout)) {
                throw new ImportRefusedException.LayoutMismatch("partition " + partition + " of the file", state.layoutFingerprint(), layout);
            }
            if (partition >= partitions) {
                throw new ImportRefusedException("the file has state for partition " + partition + " but the input topic has "
                        + partitions + " partitions (0.." + (partitions - 1) + "): is it the export of another application?");
            }
            if (state.workerId() != workerOffset + partition) {
                throw new ImportRefusedException("partition " + partition + " of the file has worker " + state.workerId()
                        + " but id.worker-offset=" + workerOffset + " gives worker " + (workerOffset + partition)
                        + ": set the id.worker-offset the state was written with");
            }
        }
        current.forEach((partition, state) -> {
            if (!state.layoutFingerprint().equals(layout)) {
                throw new ImportRefusedException.LayoutMismatch("partition " + partition + " of " + topic, state.layoutFingerprint(), layout);
            }
        });
        List<ImportRefusedException.Lowering> lowerings = new ArrayList<>();
        file.states().forEach((partition, imported) -> {
            WorkerState now = current.get(partition);
            if (now != null && imported.highWaterMark() < now.highWaterMark()) {
                lowerings.add(new ImportRefusedException.Lowering(partition, now.highWaterMark(), time(configured, now.highWaterMark()),
                        imported.highWaterMark(), time(configured, imported.highWaterMark())));
            }
        });
        if (!lowerings.isEmpty()) {
            throw new ImportRefusedException.LowerMark(topic, lowerings);
        }
        List<Row> rows = new ArrayList<>();
        for (int partition : new TreeSet<>(union(file.states(), current))) {
            WorkerState now = current.get(partition);
            WorkerState imported = file.states().get(partition);
            if (imported == null) {
                rows.add(new Row(partition, now, now, Action.KEEP));
                continue;
            }
            WorkerState after = now == null || imported.epoch() >= now.epoch() ? imported
                    : new WorkerState(imported.layoutFingerprint(), imported.workerId(), now.epoch(), imported.holder(),
                            imported.acquiredAt(), imported.heartbeatAt(), imported.lastId(), imported.reservedUntil());
            rows.add(new Row(partition, now, after, after.sameMarks(now) ? Action.UNCHANGED : Action.WRITE));
        }
        return new ImportPlan(rows);
    }

    /** The states to write, by partition. */
    public SortedMap<Integer, WorkerState> writes() {
        SortedMap<Integer, WorkerState> writes = new TreeMap<>();
        rows.stream().filter(row -> row.action() == Action.WRITE).forEach(row -> writes.put(row.partition(), row.after()));
        return writes;
    }

    private static List<Integer> union(Map<Integer, ?> a, Map<Integer, ?> b) {
        List<Integer> keys = new ArrayList<>(a.keySet());
        keys.addAll(b.keySet());
        return keys;
    }

    private static String time(IdLayout layout, long id) {
        return id < 0 ? "none" : Instant.ofEpochMilli(layout.decode(id).wallMillis()).toString();
    }
}
