package io.snowstamp.resume;

import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;

import java.time.Instant;

/**
 * Where a task's generator resumes: above {@code max(registry mark, state.lastId,
 * state.reservedUntil, tail, clock)}, plus the takeover gap. The registry mark is what a released
 * claim of the worker registry recorded for the worker (another application's IDs, possibly in
 * another output topic), read once at start. Every input is kept so that the INFO line at task start explains
 * the decision completely.
 *
 * @param resumeAbove the generator issues only IDs greater than this (-1: nothing was issued before)
 * @param registryMark the mark a released claim of the worker registry recorded for the worker, -1 if none
 * @param source      which input decided: {@code registry}, {@code state.lastId}, {@code state.reservedUntil},
 *                    {@code tail}, {@code clock} (followed by {@code +gap} when a gap was added)
 */
public record ResumeDecision(long stateLastId, long stateReservedUntil, TailProbe.Result tail, long registryMark, long clockMillis,
                             long gapMillis, long resumeAbove, String source, boolean reservationBounds) {

    /** Computes the decision for one worker without a registry mark. */
    public static ResumeDecision decide(IdLayout layout, long datacenter, long worker, WorkerState restored,
                                        TailProbe.Result tail, long clockMillis, long gapMillis) {
        return decide(layout, datacenter, worker, restored, tail, -1, clockMillis, gapMillis);
    }

    /**
     * Computes the decision for one worker. All IDs compared are this worker's own.
     *
     * @param registryMark the highest ID a released claim of the worker registry recorded for this worker
     *                     (another application's, possibly with another output topic), -1 if none
     */
    public static ResumeDecision decide(IdLayout layout, long datacenter, long worker, WorkerState restored,
                                        TailProbe.Result tail, long registryMark, long clockMillis, long gapMillis) {
        return decide(layout, datacenter, worker, restored, tail, registryMark, clockMillis, gapMillis, true);
    }

    /**
     * Computes the decision for one worker.
     *
     * @param reservationBounds whether {@code state.reservedUntil} bounds the resume; false where the committed output
     *                          tail decides (exactly-once with the tail guard: a reservation there reaches far ahead, and
     *                          resuming above it would run every restart's IDs that far ahead of the clock)
     */
    public static ResumeDecision decide(IdLayout layout, long datacenter, long worker, WorkerState restored,
                                        TailProbe.Result tail, long registryMark, long clockMillis, long gapMillis,
                                        boolean reservationBounds) {
        long best = -1;
        String source = "clock";
        if (registryMark > best) {
            best = registryMark;
            source = "registry";
        }
        if (restored.lastId() > best) {
            best = restored.lastId();
            source = "state.lastId";
        }
        if (reservationBounds && restored.reservedUntil() > best) {
            best = restored.reservedUntil();
            source = "state.reservedUntil";
        }
        if (tail.highestId() > best) {
            best = tail.highestId();
            source = "tail";
        }
        long clockUnits = Math.max(0, layout.unitsSinceEpoch(clockMillis));
        // the clock wins when its current unit is above everything issued: IDs start at (now, 0).
        // best is still passed on: the clock may step back before the first ID is issued
        if (best < 0 || layout.decode(best).time() < clockUnits) {
            source = "clock";
        }
        if (gapMillis > 0) {
            long baseUnits = best < 0 ? clockUnits : Math.max(clockUnits, layout.decode(best).time());
            long gapUnits = (gapMillis + layout.unitMillis() - 1) / layout.unitMillis();
            long time = Math.min(layout.maxTime(), baseUnits + gapUnits);
            best = layout.encode(time, datacenter, worker, layout.maxSequence());
            source = source + "+gap";
        }
        return new ResumeDecision(restored.lastId(), restored.reservedUntil(), tail, registryMark, clockMillis, gapMillis, best, source,
                reservationBounds);
    }

    /** One line with every input and the outcome. */
    public String describe(IdLayout layout) {
        return "resume above " + (resumeAbove < 0 ? "nothing (first start)" : resumeAbove + " (" + at(layout, resumeAbove) + ")")
                + " from " + source
                + " = max(state.lastId=" + idText(layout, stateLastId)
                + (reservationBounds ? ", state.reservedUntil=" + idText(layout, stateReservedUntil) : "")
                + ", tail=" + (tail == TailProbe.Result.NONE ? "off" : idText(layout, tail.highestId())
                + " [" + tail.scanned() + " records at offsets " + tail.fromOffset() + ".." + tail.endOffset()
                + " in " + tail.millis() + " ms]")
                + (registryMark >= 0 ? ", registry=" + idText(layout, registryMark) : "")
                + ", clock=" + Instant.ofEpochMilli(clockMillis) + ")"
                + (gapMillis > 0 ? " + takeover gap " + gapMillis + " ms" : "")
                + (reservationBounds ? "" : "; state.reservedUntil=" + idText(layout, stateReservedUntil)
                + " is no bound here: the committed output tail decides (exactly-once with the tail guard)");
    }

    private static String idText(IdLayout layout, long id) {
        return id < 0 ? "none" : id + " (" + at(layout, id) + ")";
    }

    private static Instant at(IdLayout layout, long id) {
        return Instant.ofEpochMilli(layout.decode(id).wallMillis());
    }
}
