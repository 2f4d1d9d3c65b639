package io.snowstamp.recovery;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Safe resume points for a deployment, per partition: {@code resume = max(high-water mark of the
 * source changelog's state, highest ID of the partition's worker in the output topic)}, and the
 * seed {@link WorkerState} that makes a stamper starting from the target changelog resume above it
 * (its start rule is {@code max(state.lastId, state.reservedUntil, tail, clock)}). A pure function.
 *
 * <p>The seed keeps the source epoch (0 without one; never below the target's), is held by
 * {@value #HOLDER}, and has {@code lastId = reservedUntil = resume}. A partition where nothing was
 * ever issued needs no seed; one whose target state is already at or above the resume point is
 * kept as it is.
 *
 * @param rows one row per partition {@code 0..partitions-1}
 */
public record ResumePlan(List<Row> rows) {
    /** The lease holder written into seeds. */
    public static final String HOLDER = "recover";

    /** What happens to one partition. */
    public enum Action {
        /** the seed is written */
        SEED,
        /** the target changelog already holds a mark at or above the resume point */
        KEEP,
        /** no ID was ever issued for this partition: nothing to protect */
        NONE
    }

    /**
     * @param fromChangelog high-water mark of the source changelog's state, -1 if none
     * @param fromOutput    highest ID of the worker in the output partition, -1 if none
     * @param target        the target changelog's state now, or null
     * @param resume        {@code max(fromChangelog, fromOutput)}, -1 if both are none
     * @param seed          the state to write for {@link Action#SEED}, else null
     */
    public record Row(int partition, long worker, long fromChangelog, long fromOutput, WorkerState target, long resume,
                      WorkerState seed, Action action) {
    }

    public ResumePlan {
        rows = List.copyOf(rows);
    }

    /**
     * @param source       newest state per partition of the source changelog (empty if none)
     * @param output       highest ID per partition found in the output topic (absent or -1: none)
     * @param target       newest state per partition of the target changelog (may be the source's)
     * @param workerOffset {@code id.worker-offset}: partition p has worker {@code workerOffset + p}
     * @param now          wall-clock Unix millis, written as the seed's acquiredAt and heartbeatAt
     * @throws ImportRefusedException if a stored state has another layout or worker than configured
     */
    public static ResumePlan plan(int partitions, Map<Integer, WorkerState> source, Map<Integer, Long> output,
                                  Map<Integer, WorkerState> target, IdLayout layout, long workerOffset, long now) {
        check(source, "the source changelog", layout, workerOffset, partitions);
        check(target, "the target changelog", layout, workerOffset, partitions);
        List<Row> rows = new ArrayList<>();
        for (int partition = 0; partition < partitions; partition++) {
            long worker = workerOffset + partition;
            WorkerState old = source.get(partition);
            long fromChangelog = old == null ? -1 : old.highWaterMark();
            long fromOutput = output.getOrDefault(partition, -1L);
            long resume = Math.max(fromChangelog, fromOutput);
            WorkerState existing = target.get(partition);
            if (resume < 0) {
                rows.add(new Row(partition, worker, fromChangelog, fromOutput, existing, resume, null, Action.NONE));
            } else if (existing != null && existing.highWaterMark() >= resume) {
                rows.add(new Row(partition, worker, fromChangelog, fromOutput, existing, resume, null, Action.KEEP));
            } else {
                long epoch = Math.max(old == null ? 0 : old.epoch(), existing == null ? 0 : existing.epoch());
                WorkerState seed = new WorkerState(layout.fingerprint(), worker, epoch, HOLDER, now, now, resume, resume);
                rows.add(new Row(partition, worker, fromChangelog, fromOutput, existing, resume, seed, Action.SEED));
            }
        }
        return new ResumePlan(rows);
    }

    /** The seeds to write, by partition. */
    public SortedMap<Integer, WorkerState> seeds() {
        SortedMap<Integer, WorkerState> seeds = new TreeMap<>();
        rows.stream().filter(row -> row.action() == Action.SEED).forEach(row -> seeds.put(row.partition(), row.seed()));
        return seeds;
    }

    /** Whether no partition has anything to protect: no state and no ID in the output. */
    public boolean nothingIssued() {
        return rows.stream().allMatch(row -> row.action() == Action.NONE);
    }

    private static void check(Map<Integer, WorkerState> states, String what, IdLayout layout, long workerOffset, int partitions) {
        states.forEach((partition, state) -> {
            if (!state.layoutFingerprint().equals(layout.fingerprint())) {
                throw new ImportRefusedException.LayoutMismatch("partition " + partition + " of " + what,
                        state.layoutFingerprint(), layout.fingerprint());
            }
            if (partition >= partitions) {
                throw new ImportRefusedException(what + " has state for partition " + partition + " but the output topic has "
                        + partitions + " partitions: is it the changelog of another application?");
            }
            if (state.workerId() != workerOffset + partition) {
                throw new ImportRefusedException("partition " + partition + " of " + what + " has worker " + state.workerId()
                        + " but id.worker-offset=" + workerOffset + " gives worker " + (workerOffset + partition)
                        + ": set the id.worker-offset the state was written with");
            }
        });
    }
}
