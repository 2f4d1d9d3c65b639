package io.snowstamp.registry;

import io.snowstamp.config.Durations;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Whether an application's claim may be given up now ({@code workers release}, and the hand-over
 * of {@code recover --to-application-id}): only after a clean stop, or, for a claim that went
 * without heartbeat for longer than {@code registry.stale-after} (crashed or frozen), when the
 * person says so with {@code --force}. A claim with a recent heartbeat and no clean stop may
 * belong to a running application: never. Pure; the group check (no active member) is the
 * caller's, made before.
 */
public final class ReleaseCheck {
    private ReleaseCheck() {
    }

    /**
     * @param segments the application's granted claims (at least one)
     * @param verb     what {@code --force} would do, for the message: "release it", "hand it over"
     * @return empty when the claim may be given up, else the one line that says why not and what to do
     */
    public static Optional<String> refusal(String application, List<Claim> segments, long now, Duration staleAfter, boolean force,
                                           String verb) {
        Claim newest = segments.stream().max(Comparator.comparingLong(Claim::heartbeatAt)).orElseThrow();
        if (stoppedCleanly(segments)) {
            return Optional.empty();
        }
        long age = now - newest.heartbeatAt();
        if (age <= staleAfter.toMillis()) {
            return Optional.of("application " + application + " did not record a clean stop and its last heartbeat was " + age / 1000
                    + " s ago (" + Instant.ofEpochMilli(newest.heartbeatAt()) + "): it may still be running; stop it, or wait until"
                    + " the claim is stale (registry.stale-after=" + Durations.format(staleAfter) + ") and use --force");
        }
        if (!force) {
            return Optional.of("the claim of application " + application + " is stale (no heartbeat for " + age / 1000
                    + " s, no clean stop: crashed or frozen): check that no instance of it runs anywhere, then " + verb + " with --force");
        }
        return Optional.empty();
    }

    /** Whether every segment recorded a clean stop (else a stale claim given up with --force). */
    public static boolean stoppedCleanly(List<Claim> segments) {
        return segments.stream().allMatch(claim -> WorkerRegistry.STOPPED_NOTE.equals(claim.note()));
    }
}
