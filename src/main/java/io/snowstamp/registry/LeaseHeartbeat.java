package io.snowstamp.registry;

import io.snowstamp.registry.WorkerRegistry.Lease;
import io.snowstamp.registry.WorkerRegistry.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * Keeps a granted lease alive (the {@link WorkerRegistry} job after the claim): a heartbeat record
 * per claim of the lease, a claim missing from a recreated registry claimed afresh, and the clean
 * stop recorded. Not thread-safe; one per {@link WorkerRegistry}, used by its heartbeat thread.
 *
 * <p><b>Why a heartbeat has a timeout.</b> After the registry was deleted and recreated, a newcomer
 * waits its grace for running applications to re-assert their claims before it may be granted their
 * workers. A heartbeat under way at the recreation may have read the deleted topic, and its client
 * then waits, up to the client's own timeouts (a minute), for what never comes: an end offset the new
 * topic does not reach, a write meant for the old one. The next heartbeat, the one that re-asserts,
 * would come after the newcomer's claim, and two applications would stamp with the same workers. So
 * heartbeats use a registry log of their own, and every wait of one heartbeat (its read, its writes,
 * the read back) ends by the heartbeat timeout T after it started; then it fails and is tried again
 * at the next. The heartbeat under way at the recreation has ended within T, the next starts one
 * heartbeat H later (a fixed delay) and has re-asserted within T: H + 2T after the recreation, which
 * the grace, H + 2T + 1 s from when the newcomer saw the recreated registry, covers
 * ({@code RegistrySettings.grace}; every application of a cluster uses one {@code registry.heartbeat}).
 */
final class LeaseHeartbeat {
    /** The registry's logger: operators follow one logger for everything about claims. */
    private static final Logger log = LoggerFactory.getLogger(WorkerRegistry.class);

    private final WorkerRegistry owner;
    private final Properties client;
    /** The claimant's log (for the clean stop, after the last heartbeat). */
    private final RegistryLog registry;
    private final LongSupplier clock;
    /** The heartbeats' own log, its producer's waits bounded by the heartbeat timeout; opened by the first heartbeat. */
    private volatile RegistryLog beats;

    LeaseHeartbeat(WorkerRegistry owner, Properties client, RegistryLog registry, LongSupplier clock) {
        this.owner = owner;
        this.client = client;
        this.registry = registry;
        this.clock = clock;
    }

    /** {@link WorkerRegistry#heartbeat}: same contract. */
    void heartbeat(Request request, Lease lease, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (beats == null) {
            beats = RegistryLog.openUnchecked(client, registry.topic(), timeout);
        }
        RegistryLog.Snapshot snapshot = WorkerRegistry.readable(beats, beats.read(deadline));
        RegistryView view = snapshot.view();
        long now = clock.getAsLong();
        for (String key : lease.keys()) {
            RegistryView.Verdict verdict = view.verdict(key).orElse(null);
            if (verdict != null && verdict.granted()) {
                beats.append(verdict.claim().withHeartbeat(now, view.order(verdict.entry()), snapshot.registryId()), deadline);
                continue;
            }
            if (verdict != null) {
                throw new RegistryLostException("the claim " + key + " is no longer granted: " + ClaimRefusals.describe(verdict.blockedBy(), clock.getAsLong())
                        + " holds its workers");
            }
            RegistryView.Entry inactive = view.inactive().stream().filter(e -> e.claim().key().equals(key)).findFirst().orElse(null);
            if (inactive != null) {
                if (view.releaseOverwritten(key)) {
                    // this holder's own heartbeat, read before the release and written after it, is now the
                    // key's newest record: write the release again so that compaction keeps the release
                    beats.append(inactive.claim(), deadline);
                }
                throw new RegistryLostException("the claim " + key + " was " + inactive.claim().state() + " while the application ran"
                        + (inactive.claim().note().isEmpty() ? "" : " (" + inactive.claim().note() + ")"));
            }
            reassert(deadline, request, lease, key, now, snapshot.registryId(), view);
        }
    }

    private void reassert(long deadline, Request request, Lease lease, String key, long now, String registryId, RegistryView view) {
        long first = Long.parseLong(key.substring(key.lastIndexOf('/') + 1));
        long end = first;
        // the segment's end: the next segment's first worker, or the lease's end
        for (String other : lease.keys()) {
            long start = Long.parseLong(other.substring(other.lastIndexOf('/') + 1));
            if (start > first) {
                end = end == first ? start : Math.min(end, start);
            }
        }
        if (end == first) {
            end = lease.firstWorker() + lease.count();
        }
        SortedMap<Long, Long> floors = new TreeMap<>();
        for (long worker = first; worker < end; worker++) {
            long mark = Math.max(lease.markOf(worker), view.markOf(request.space(), request.datacenter(), worker));
            if (mark >= 0) {
                floors.put(worker, mark);
            }
        }
        Claim claim = new Claim(request.space(), request.datacenter(), request.application(), first, (int) (end - first),
                request.layout().fingerprint(), request.input(), request.output(), request.instance(), now, now, Claim.State.ACTIVE, -1,
                registryId, floors, "re-asserted by a heartbeat: the claim was missing from the registry");
        long offset = beats.append(claim, deadline);
        RegistryView after = WorkerRegistry.readable(beats, beats.read(deadline)).view();
        RegistryView.Verdict verdict = after.verdict(key).orElse(null);
        if (verdict == null || !verdict.granted()) {
            throw new RegistryLostException("the claim " + key + " was missing from the registry (recreated?) and could not be re-asserted: "
                    + (verdict == null || verdict.blockedBy() == null ? "it was replaced" : ClaimRefusals.describe(verdict.blockedBy(), clock.getAsLong()) + " claimed its workers first"));
        }
        log.warn("the claim {} was missing from the worker registry {} (deleted and recreated?): re-asserted at offset {}", key,
                beats.topic(), offset);
    }

    /** A hand-over's target recorded as stopped: on the claimant's log, within its timeout. */
    void stopped(Lease lease) {
        stopped(lease, registry, registry.deadline());
    }

    /**
     * {@link WorkerRegistry#stopped}: the clean stop of a running application, a last heartbeat on the heartbeats' own
     * log, every wait over by {@code timeout}. Its log's write guard (a quarter of its timeout left) fits that deadline;
     * the claimant's log, with a longer timeout, would refuse every write under a short deadline.
     */
    void stopped(Lease lease, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (beats == null) {
            beats = RegistryLog.openUnchecked(client, registry.topic(), timeout);
        }
        stopped(lease, beats, deadline);
    }

    private void stopped(Lease lease, RegistryLog log, long deadline) {
        RegistryLog.Snapshot snapshot = WorkerRegistry.readable(log, log.read(deadline));
        RegistryView view = snapshot.view();
        long now = clock.getAsLong();
        for (String key : lease.keys()) {
            RegistryView.Verdict verdict = view.verdict(key).filter(RegistryView.Verdict::granted).orElse(null);
            if (verdict != null) {
                Claim claim = verdict.claim();
                log.append(claim.withState(Claim.State.ACTIVE, now, view.order(verdict.entry()), snapshot.registryId(), claim.marks(),
                        WorkerRegistry.STOPPED_NOTE), deadline);
            }
        }
    }

    void close() {
        RegistryLog open = beats;
        if (open != null) {
            open.close();
        }
    }
}
