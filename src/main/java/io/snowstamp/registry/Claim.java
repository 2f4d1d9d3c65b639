package io.snowstamp.registry;

import java.util.Collections;
import java.util.Locale;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One record of the worker registry: application {@code application} holds (or held) workers
 * {@code [firstWorker, firstWorker + count)} of datacenter {@code datacenter} in ID space
 * {@code space}, with IDs of layout {@code layout}. Written as JSON ({@link ClaimCodec}) under the
 * key {@link #key()}; every later record of the same claim (heartbeats, release) has the same key,
 * so compaction keeps the newest.
 *
 * <p>{@code claimOffset} orders concurrent claims: -1 in the first record of a claim (its own
 * offset is then its position), and that first offset, carried forward, in every later record, so
 * that compaction, which drops the first record, cannot move the claim behind a later one. It is
 * valid only in the registry incarnation {@code registryId} (the topic's id): a registry deleted
 * and recreated starts its offsets anew.
 *
 * @param marks for a {@link State#RELEASED released} claim, the high-water mark of every worker of
 *              its range (-1: nothing was ever issued); empty otherwise
 */
public record Claim(String space, long datacenter, String application, long firstWorker, int count, String layout,
                    String input, String output, String instance, long claimedAt, long heartbeatAt, State state,
                    long claimOffset, String registryId, SortedMap<Long, Long> marks, String note) {
    /** The version of the record format written; readers refuse newer ones. */
    public static final int VERSION = 1;

    /** Where a claim stands. */
    public enum State {
        /** held by a running (or stopped but not released) application */
        ACTIVE,
        /** given up, with the high-water mark of each worker: free for reuse above those marks */
        RELEASED,
        /** lost to an earlier concurrent claim before anything was issued: frees nothing, blocks nothing */
        WITHDRAWN;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public Claim {
        marks = Collections.unmodifiableSortedMap(new TreeMap<>(marks == null ? new TreeMap<>() : marks));
        note = note == null ? "" : note;
        registryId = registryId == null ? "" : registryId;
    }

    /** {@code SPACE/DATACENTER/APPLICATION/FIRST-WORKER}: one claim (a range, or the extension of one). */
    public String key() {
        return key(space, datacenter, application, firstWorker);
    }

    static String key(String space, long datacenter, String application, long firstWorker) {
        return space + "/" + datacenter + "/" + application + "/" + firstWorker;
    }

    /** One past the last worker. */
    public long endWorker() {
        return firstWorker + count;
    }

    /** Whether this claim and workers {@code [first, first + n)} share a worker (same space and datacenter assumed). */
    public boolean overlaps(long first, long n) {
        return first < endWorker() && firstWorker < first + n;
    }

    /** {@code first..last}, as people read ranges. */
    public String range() {
        return firstWorker + ".." + (endWorker() - 1);
    }

    /** The next heartbeat: the note (e.g. "stopped") is cleared, the first offset carried. */
    public Claim withHeartbeat(long now, long carriedOffset, String registry) {
        return new Claim(space, datacenter, application, firstWorker, count, layout, input, output, instance, claimedAt, now, state,
                carriedOffset, registry, marks, "");
    }

    public Claim withState(State newState, long now, long carriedOffset, String registry, SortedMap<Long, Long> newMarks,
                           String newNote) {
        return new Claim(space, datacenter, application, firstWorker, count, layout, input, output, instance, claimedAt, now, newState,
                carriedOffset, registry, newMarks, newNote);
    }

    /** The mark of a worker of a released claim, -1 if none was recorded. */
    public long markOf(long worker) {
        return marks.getOrDefault(worker, -1L);
    }
}
