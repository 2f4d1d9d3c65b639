package io.snowstamp.registry;

import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Keys;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ResumePlan;

import java.time.Duration;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What {@code recover} does to the worker registry, decided before anything is written. A
 * recovery into another application id is a hand-over: the new application takes the old one's
 * workers (its seeds are states of those workers), so the old claim is released with the recovered
 * resume points as marks and the same workers are claimed for the new application, which joins
 * that claim when it starts ({@code id.worker-offset} fixed to the same offset, or {@code auto}).
 * A recovery into the same application changes nothing in the registry. Pure: a function of the
 * registry as read and of the settings.
 *
 * @param kind        what happens
 * @param firstWorker the first worker the recovery is about: the source's claim, else {@code id.worker-offset}
 * @param count       how many workers change hands (the source's whole range, or the partitions)
 * @param released    the source's claims given up ({@link Kind#HAND_OVER}); empty otherwise
 * @param refusal     for {@link Kind#REFUSED}: the one line that says why and what to do; else empty
 */
public record HandOver(Kind kind, String source, String target, String space, long datacenter, long firstWorker, int count,
                       List<RegistryView.Verdict> released, String refusal) {
    /** What {@code recover --apply} does to the registry. */
    public enum Kind {
        /** the same application, which holds its claim: it keeps it */
        KEEP,
        /** the same application, which holds no claim: it claims its workers when it starts, as always */
        CLAIM_AT_START,
        /** the source's claim is released with marks and its workers claimed for the target */
        HAND_OVER,
        /** the source holds no claim: the free workers are claimed for the target */
        CLAIM,
        /** the target already holds exactly these workers (a hand-over done before) */
        HELD,
        /** {@code --apply} refuses before writing anything: see {@link #refusal} */
        REFUSED
    }

    /** What the recovery asks for. {@code offset} -1 means {@code id.worker-offset=auto}. */
    public record Request(String space, long datacenter, String source, String target, IdLayout layout, long offset, int partitions,
                          String output, long now, Duration staleAfter, boolean force) {
    }

    public HandOver {
        released = List.copyOf(released);
    }

    /**
     * @throws ConfigException when the settings disagree with the source's claim (its offset, layout
     *         or datacenter), or {@code auto} has no claim to learn the offset from: the resume points
     *         would be computed for the wrong workers
     */
    public static HandOver plan(RegistryView view, Request request) {
        List<RegistryView.Verdict> source = view.heldBy(request.space(), request.source());
        long first = source.isEmpty() ? request.offset() : agree(request, source);
        if (first < 0) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, "auto", "the offset application " + request.source()
                    + " ran with (it holds no claim in ID space " + request.space() + " of the worker registry, so auto cannot tell)");
        }
        long datacenter = request.datacenter();
        int count = source.isEmpty() ? request.partitions()
                : (int) (source.get(source.size() - 1).claim().endWorker() - first);
        if (request.source().equals(request.target())) {
            return new HandOver(source.isEmpty() ? Kind.CLAIM_AT_START : Kind.KEEP, request.source(), request.target(), request.space(), datacenter, first, count, List.of(), "");
        }
        List<RegistryView.Verdict> target = view.heldBy(request.space(), request.target());
        if (!target.isEmpty()) {
            Claim held = target.get(0).claim();
            long end = target.get(target.size() - 1).claim().endWorker();
            if (source.isEmpty() && held.firstWorker() == first && held.datacenter() == datacenter && end - first >= count) {
                return new HandOver(Kind.HELD, request.source(), request.target(), request.space(), datacenter, first, count, List.of(), "");
            }
            return refused(request, datacenter, first, count, "application " + request.target() + " already holds workers "
                    + held.firstWorker() + ".." + (end - 1) + " in ID space " + request.space() + (source.isEmpty() ? ""
                    : " while " + request.source() + " holds workers " + first + ".." + (first + count - 1))
                    + ": a new application id takes over the old one's workers; if " + request.target() + " never stamped, release its"
                    + " range with 'snowstamp workers release --application-id " + request.target() + " --apply' and recover again");
        }
        if (!source.isEmpty()) {
            List<Claim> claims = source.stream().map(RegistryView.Verdict::claim).toList();
            String output = claims.get(0).output();
            if (!output.equals(request.output())) {
                return refused(request, datacenter, first, count, "application " + request.source() + " wrote to " + output
                        + " (its claim in the worker registry says so) but --from-output is " + request.output()
                        + ": the marks handed over must cover what it wrote; use --from-output " + output);
            }
            return ReleaseCheck.refusal(request.source(), claims, request.now(), request.staleAfter(), request.force(), "hand it over")
                    .map(refusal -> refused(request, datacenter, first, count, refusal))
                    .orElseGet(() -> new HandOver(Kind.HAND_OVER, request.source(), request.target(), request.space(), datacenter, first,
                            count, source, ""));
        }
        Claim candidate = new Claim(request.space(), datacenter, request.target(), first, count, request.layout().fingerprint(), "",
                request.output(), "", request.now(), request.now(), Claim.State.ACTIVE, -1, view.registryId(), null, "");
        List<Claim> conflicts = view.conflictsWith(candidate);
        if (!conflicts.isEmpty()) {
            return refused(request, datacenter, first, count, "workers " + candidate.range() + " are held by "
                    + ClaimRefusals.describe(conflicts.get(0), request.now()) + ", not by " + request.source() + ": check --from-changelog"
                    + " and id.worker-offset (the offset " + request.source() + " ran with)");
        }
        return new HandOver(Kind.CLAIM, request.source(), request.target(), request.space(), datacenter, first, count, List.of(), "");
    }

    /** The first worker of the source's claim, once the settings agree with it. */
    private static long agree(Request request, List<RegistryView.Verdict> source) {
        Claim claim = source.get(0).claim();
        String where = "application " + request.source() + " holds workers " + claim.firstWorker() + ".."
                + (source.get(source.size() - 1).claim().endWorker() - 1) + " in ID space " + request.space() + " of the worker registry";
        if (request.offset() >= 0 && request.offset() != claim.firstWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, request.offset(), claim.firstWorker() + " or auto (" + where + ")");
        }
        if (request.datacenter() != claim.datacenter()) {
            throw new ConfigException(Keys.ID_DATACENTER_ID, request.datacenter(), claim.datacenter() + " (" + where + ", datacenter "
                    + claim.datacenter() + ")");
        }
        if (!claim.layout().equals(request.layout().fingerprint())) {
            throw new ConfigException("the id.* settings give layout " + request.layout().fingerprint() + " but " + where + " with layout "
                    + claim.layout() + ": set the id.* keys it ran with");
        }
        return claim.firstWorker();
    }

    private static HandOver refused(Request request, long datacenter, long first, int count, String why) {
        return new HandOver(Kind.REFUSED, request.source(), request.target(), request.space(), datacenter, first, count, List.of(), why);
    }

    /** {@code first..last}, as people read ranges. */
    public String range() {
        return firstWorker + ".." + (firstWorker + count - 1);
    }

    /**
     * The marks recorded with the release: per worker of the range, the higher of its resume point
     * (what {@code recover} computed from the source's changelog and output) and any mark the
     * registry already holds for it (inherited from an earlier release); -1 where neither has one.
     */
    public SortedMap<Long, Long> marks(ResumePlan plan, RegistryView view) {
        SortedMap<Long, Long> marks = new TreeMap<>();
        for (long worker = firstWorker; worker < firstWorker + count; worker++) {
            marks.put(worker, view.markOf(space, datacenter, worker));
        }
        for (ResumePlan.Row row : plan.rows()) {
            marks.computeIfPresent(row.worker(), (worker, mark) -> Math.max(mark, row.resume()));
        }
        return marks;
    }

    /**
     * One line for a person: what {@code --apply} will do ({@code applied} false) or did.
     *
     * @param registry the registry topic's name
     */
    public String describe(String registry, boolean applied) {
        String workers = "workers " + range() + " (ID space " + space + ", datacenter " + datacenter + ")";
        return "worker registry " + registry + ": " + switch (kind) {
            case KEEP -> "unchanged (" + source + " keeps its claim of " + workers + ")";
            case CLAIM_AT_START -> "unchanged (" + source + " holds no claim: it claims " + workers + " when it starts)";
            case HELD -> "unchanged (" + target + " already holds " + workers + ")";
            case REFUSED -> (applied ? "refused: " : "--apply would refuse: ") + refusal;
            case HAND_OVER -> (applied ? "handed " : "--apply hands ") + workers + " over from " + source + " to " + target + ": "
                    + source + "'s claim" + (ReleaseCheck.stoppedCleanly(released.stream().map(RegistryView.Verdict::claim).toList())
                    ? " (stopped cleanly)" : " (stale, --force)") + (applied ? " released" : " is released")
                    + " with the resume points above as marks, and the workers " + (applied ? "claimed" : "are claimed") + " for " + target
                    + ", which joins that claim when it starts";
            case CLAIM -> (applied ? "claimed " : "--apply claims ") + workers + " for " + target + " (" + source
                    + " holds no claim), which joins that claim when it starts";
        };
    }
}
