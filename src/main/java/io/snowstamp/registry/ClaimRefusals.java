package io.snowstamp.registry;

import io.snowstamp.registry.WorkerRegistry.Request;

import java.time.Instant;
import java.util.List;

/**
 * The wording of a refused claim: one line naming the conflict, the claim in the way and the fix.
 * {@link WorkerRegistry} decides; this class only words its decisions.
 */
final class ClaimRefusals {
    private ClaimRefusals() {
    }

    static ClaimRefusedException disagree(Request request, Claim held, List<RegistryView.Verdict> own, String what) {
        long end = own.get(own.size() - 1).claim().endWorker();
        return new ClaimRefusedException("this instance of application " + request.application() + " is configured with " + what
                + ", which disagrees with the application's claim in ID space " + request.space() + " (workers "
                + held.firstWorker() + ".." + (end - 1) + ", datacenter " + held.datacenter() + ", layout " + held.layout()
                + "): every instance of an application must use the claim's settings; to change them, stop every instance and release"
                + " the range with 'snowstamp workers release --application-id " + request.application() + " --apply'");
    }

    /** Refuses {@code candidate} when it overlaps a claim of another application (say which, and the fix); returns otherwise. */
    static void refuseConflicts(Request request, Claim candidate, RegistryView view, long now) {
        List<Claim> conflicts = view.conflictsWith(candidate);
        if (conflicts.isEmpty()) {
            return;
        }
        Claim other = conflicts.get(0);
        if (!other.layout().equals(candidate.layout())) {
            throw new ClaimRefusedException("application " + request.application() + " uses layout " + candidate.layout()
                    + " but application " + other.application() + " (" + other.state() + ", workers " + other.range() + ") issued IDs"
                    + " of layout " + other.layout() + " in ID space " + request.space() + ": IDs of two layouts can collide outside"
                    + " any worker range; use the same id.* layout settings, or another id.space for IDs that never meet");
        }
        if (other.input().equals(request.input()) && other.output().equals(request.output())) {
            // most likely the same stamper under a new application.id: a new range would stamp the whole input again
            throw new ClaimRefusedException("application " + request.application() + " stamps " + request.input() + " into "
                    + request.output() + " like " + describe(other, now) + ", which holds workers " + candidate.range()
                    + " of ID space " + request.space() + ": if this is " + other.application() + " under a new application.id,"
                    + " hand its workers and resume points over with 'snowstamp recover --from-changelog " + other.application()
                    + " --from-output " + request.output() + " --to-application-id " + request.application() + " --apply'"
                    + " (recovery.md, Application id change); a new range (id.worker-offset=auto) would stamp the whole input"
                    + " again with new IDs");
        }
        long free = view.firstFree(request.space(), request.datacenter(), request.application(), request.partitions(),
                request.layout().maxWorker(), List.of());
        throw new ClaimRefusedException("id.worker-offset=" + request.offset() + " claims workers " + candidate.range() + " of ID space "
                + request.space() + ", datacenter " + request.datacenter() + ", but they overlap " + describe(other, now) + ": "
                + (free >= 0 ? "set id.worker-offset=" + free + " (the first free range of " + request.partitions() + " workers) or auto"
                : "no range of " + request.partitions() + " workers is free")
                + ", or, if " + other.application() + " is retired, release its range with 'snowstamp workers release --application-id "
                + other.application() + " --apply'");
    }

    /** "application B (workers 0..3, last heartbeat 2026-...Z, 12 s ago)". */
    static String describe(Claim other, long now) {
        long age = Math.max(0, now - other.heartbeatAt()) / 1000;
        return "application " + other.application() + " (workers " + other.range() + ", last heartbeat "
                + Instant.ofEpochMilli(other.heartbeatAt()) + ", " + age + " s ago)";
    }
}
