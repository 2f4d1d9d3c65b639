package io.snowstamp.registry;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.IdLayout;
import io.snowstamp.recovery.ApplicationGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Claims, keeps and checks an application's worker range in the registry. The protocol (see
 * {@link RegistryView} for the rule that decides): read the registry; join the application's own
 * claim if it has one (refusing a configuration that disagrees with it), extend it when the input
 * grew, or append a new claim; then read the log to its end and accept the verdict. A claimant that
 * lost to an earlier concurrent claim withdraws its record and tries again (with {@code auto}: the
 * next free range; with a fixed offset: it is refused with the winner's name).
 *
 * <p><b>A registry deleted and recreated.</b> Running applications re-assert their claims at their
 * next heartbeat (a fresh first record, since offsets of the old incarnation are void). A new
 * claim therefore waits {@code grace} (long enough for that, see {@link LeaseHeartbeat}) once
 * whenever applications it has no record of have worker-state changelogs on the cluster, then
 * reads the registry again. Without such applications (a new cluster, or every application
 * registered) there is nothing to wait for.
 */
public final class WorkerRegistry implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WorkerRegistry.class);
    private static final int ATTEMPTS = 10;
    /** Suffix of the worker-state changelog topics (stream.Names, not imported: registry sits below stream). */
    static final String CHANGELOG_SUFFIX = "-worker-state-changelog";

    /** What an application asks for. {@code offset} -1 means {@code id.worker-offset=auto}. */
    public record Request(String space, long datacenter, String application, IdLayout layout, int partitions, long offset,
                          String input, String output, String instance, Duration expireAfter, Duration grace) {
        boolean auto() {
            return offset < 0;
        }
    }

    /**
     * A granted range.
     *
     * @param marks worker -> the highest ID it may ever have issued under a released claim (-1: none): resume above it
     * @param how   one phrase for the start-up log line
     */
    public record Lease(long firstWorker, int count, List<String> keys, SortedMap<Long, Long> marks, String how) {
        public long markOf(long worker) {
            return marks.getOrDefault(worker, -1L);
        }
    }

    private final RegistryLog registry;
    private final LongSupplier clock;
    private final Properties client;
    private final Duration timeout;
    private final LeaseHeartbeat heartbeats;
    /** Whether this client already waited for unknown applications to re-assert their claims (once is enough). */
    private boolean waited;

    public WorkerRegistry(Properties client, String topic, Duration timeout, LongSupplier clock) {
        this.registry = RegistryLog.open(client, topic, timeout);
        this.client = client;
        this.timeout = timeout;
        this.clock = clock;
        this.heartbeats = new LeaseHeartbeat(this, client, registry, clock);
    }

    public RegistryLog log() {
        return registry;
    }

    /**
     * Claims {@code [offset, offset + partitions)} (or, with {@code auto}, the lowest free range) for the application.
     *
     * @throws ClaimRefusedException with one line naming the conflict and the fix
     */
    public Lease claim(Request request) {
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            RegistryLog.Snapshot snapshot = readable();
            RegistryView view = snapshot.view();
            List<RegistryView.Verdict> own = view.heldBy(request.space(), request.application());
            if (!own.isEmpty()) {
                Lease lease = join(request, snapshot, view, own);
                if (lease != null) {
                    return lease;
                }
                continue;       // lost the race for an extension: read again
            }
            long first = request.offset();
            if (request.auto()) {
                first = view.firstFree(request.space(), request.datacenter(), request.application(), request.partitions(),
                        request.layout().maxWorker(), List.of());
                if (first < 0 && request.expireAfter() != null && recycleExpired(request, view)) {
                    continue;   // expired claims released with their marks: read again and take the range
                }
                if (first < 0) {
                    throw new ClaimRefusedException("no range of " + request.partitions() + " free workers left in ID space "
                            + request.space() + ", datacenter " + request.datacenter() + " (the layout has workers 0.."
                            + request.layout().maxWorker() + "): release retired applications with 'snowstamp workers release'"
                            + (request.expireAfter() == null ? " or set registry.expire-after to recycle claims without heartbeat" : ""));
                }
            }
            Claim candidate = newClaim(request, first, request.partitions(), view, snapshot.registryId());
            ClaimRefusals.refuseConflicts(request, candidate, view, clock.getAsLong());
            if (mustWait(request, snapshot)) {
                continue;
            }
            long offset = registry.append(candidate);
            RegistryView after = readable().view();
            RegistryView.Verdict verdict = after.verdict(candidate.key()).orElse(null);
            if (verdict != null && verdict.granted()) {
                String how = "claimed workers " + candidate.range() + " at registry offset " + after.order(verdict.entry());
                return lease(request, candidate.firstWorker(), List.of(candidate.key()), after, how);
            }
            withdraw(candidate, offset, snapshot.registryId(), verdict);
        }
        throw new ClaimRefusedException("could not claim workers for application " + request.application() + " in ID space "
                + request.space() + " after " + ATTEMPTS + " attempts: other applications kept claiming the same workers; start again");
    }

    /** The application already holds a claim: check this instance agrees, extend it if the input grew. Null: lost a race, retry. */
    private Lease join(Request request, RegistryLog.Snapshot snapshot, RegistryView view, List<RegistryView.Verdict> own) {
        Claim held = own.get(0).claim();
        long end = held.firstWorker();
        for (RegistryView.Verdict verdict : own) {
            Claim segment = verdict.claim();
            if (!segment.layout().equals(request.layout().fingerprint()) || segment.datacenter() != request.datacenter()
                    || segment.firstWorker() != end) {
                throw ClaimRefusals.disagree(request, held, own, !segment.layout().equals(request.layout().fingerprint())
                        ? "layout " + request.layout().fingerprint() + " (the claim's: " + segment.layout() + ")"
                        : "datacenter " + request.datacenter() + " (the claim's: " + segment.datacenter() + ")");
            }
            end = segment.endWorker();
        }
        if (!request.auto() && request.offset() != held.firstWorker()) {
            throw ClaimRefusals.disagree(request, held, own, "id.worker-offset=" + request.offset() + " (the claim's: " + held.firstWorker() + ")");
        }
        long first = held.firstWorker();
        List<String> keys = new ArrayList<>(own.stream().map(v -> v.claim().key()).toList());
        int have = (int) (end - first);
        if (request.partitions() <= have) {
            return lease(request, first, keys, view, "joined the claim of workers " + first + ".." + (end - 1)
                    + " (claimed " + Instant.ofEpochMilli(held.claimedAt()) + ")");
        }
        int more = request.partitions() - have;
        if (end + more - 1 > request.layout().maxWorker()) {
            throw new ClaimRefusedException("the input grew to " + request.partitions() + " partitions but application "
                    + request.application() + " holds workers " + first + ".." + (end - 1) + " and workers " + end + ".." + (end + more - 1)
                    + " do not fit the layout's " + request.layout().workerBits() + " worker bits: stamping with an unclaimed worker is"
                    + " never done; move the application to a new range (stop it, 'snowstamp workers release', start with id.worker-offset=auto)");
        }
        Claim extension = newClaim(request, end, more, view, snapshot.registryId());
        List<Claim> conflicts = view.conflictsWith(extension);
        if (!conflicts.isEmpty()) {
            Claim other = conflicts.get(0);
            throw new ClaimRefusedException("the input grew to " + request.partitions() + " partitions but workers " + extension.range()
                    + " after application " + request.application() + "'s workers " + first + ".." + (end - 1) + " are held by "
                    + ClaimRefusals.describe(other, clock.getAsLong()) + ": stamping with an unclaimed worker is never done; release " + other.application()
                    + "'s range if it is retired, or move " + request.application() + " to a new range (stop it, 'snowstamp workers release"
                    + " --application-id " + request.application() + " --apply', start with id.worker-offset=auto)");
        }
        long offset = registry.append(extension);
        RegistryView after = readable().view();
        RegistryView.Verdict verdict = after.verdict(extension.key()).orElse(null);
        if (verdict != null && verdict.granted()) {
            keys.add(extension.key());
            return lease(request, first, keys, after, "extended the claim of workers " + first + ".." + (end - 1) + " by workers "
                    + extension.range() + " (the input grew to " + request.partitions() + " partitions)");
        }
        withdraw(extension, offset, snapshot.registryId(), verdict);
        return null;
    }


    private Claim newClaim(Request request, long first, int count, RegistryView view, String registryId) {
        SortedMap<Long, Long> floors = new TreeMap<>();
        for (long worker = first; worker < first + count; worker++) {
            long mark = view.markOf(request.space(), request.datacenter(), worker);
            if (mark >= 0) {
                floors.put(worker, mark);
            }
        }
        long now = clock.getAsLong();
        return new Claim(request.space(), request.datacenter(), request.application(), first, count, request.layout().fingerprint(),
                request.input(), request.output(), request.instance(), now, now, Claim.State.ACTIVE, -1, registryId, floors, "");
    }



    /**
     * Waits once, before a new claim, while applications with a worker-state changelog have no
     * record in the registry: after a registry was deleted and recreated, running applications
     * re-assert their claims at their next heartbeat, and must come first. Measured on this
     * process's own monotonic clock (no comparison with other hosts' clocks, which may be off);
     * applications still without a record after the wait are not running with the registry
     * (retired, or {@code id.worker-registry=off}).
     *
     * @return true when it waited (read the registry again)
     */
    private boolean mustWait(Request request, RegistryLog.Snapshot snapshot) {
        if (waited) {
            return false;
        }
        Set<String> known = new java.util.HashSet<>();
        snapshot.entries().forEach(entry -> known.add(entry.claim().application()));
        known.add(request.application());
        // only applications with group members run: a retired one (no member) never re-asserts, and is not waited for
        List<String> unknown = List.copyOf(ApplicationGroup.mayBeRunning(registry.admin(),
                registry.applicationsWithChangelogs(CHANGELOG_SUFFIX).stream().filter(app -> !known.contains(app)).toList(), timeout));
        if (unknown.isEmpty()) {
            return false;
        }
        waited = true;
        log.info("applications {} are running with worker state but have no claim in the worker registry {} (registry off, or about"
                        + " to re-assert their claims after the registry was recreated): waiting up to {} ms before claiming",
                unknown, registry.topic(), request.grace().toMillis());
        // read again every quarter second: the wait ends as soon as every running application has re-asserted
        // (a loaded host's heartbeats may come late; a short fixed sleep would then hand out their workers)
        long deadline = System.nanoTime() + request.grace().toNanos();
        while (System.nanoTime() < deadline) {
            sleep(Math.min(250, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
            Set<String> now = new java.util.HashSet<>();
            readable().entries().forEach(entry -> now.add(entry.claim().application()));
            if (now.containsAll(unknown)) {
                return true;
            }
        }
        log.warn("applications {} are running but did not claim workers in the worker registry {} within {} ms: claiming anyway (an"
                + " application with the registry off is not protected by it)", unknown, registry.topic(), request.grace().toMillis());
        return true;
    }

    private boolean recycleExpired(Request request, RegistryView view) {
        long now = clock.getAsLong();
        List<Claim> expired = view.verdicts().stream().filter(RegistryView.Verdict::granted).map(RegistryView.Verdict::claim)
                .filter(c -> c.space().equals(request.space()) && c.datacenter() == request.datacenter()
                        && !c.application().equals(request.application())
                        && now - c.heartbeatAt() > request.expireAfter().toMillis()).toList();
        long first = view.firstFree(request.space(), request.datacenter(), request.application(), request.partitions(),
                request.layout().maxWorker(), expired);
        if (first < 0) {
            return false;
        }
        boolean released = false;
        for (String application : expired.stream().filter(c -> c.overlaps(first, request.partitions()))
                .map(Claim::application).distinct().toList()) {
            if (!ApplicationGroup.activeMembers(registry.admin(), application, timeout).isEmpty()) {
                continue;       // its heartbeat stopped but it still runs: never take over
            }
            List<RegistryView.Verdict> segments = view.heldBy(request.space(), application);
            ReleaseMarks.Result result = ReleaseMarks.compute(segments.stream().map(RegistryView.Verdict::claim).toList(), client,
                    registry.admin(), timeout, true);
            release(view, segments, result.marks(), request.instance(), "expired (no heartbeat for more than "
                    + request.expireAfter().toSeconds() + " s); recycled by " + request.application());
            log.warn("recycled the expired claim of application {} (workers {}, last heartbeat {}): released with marks {}",
                    application, segments.get(0).claim().range(), Instant.ofEpochMilli(segments.get(0).claim().heartbeatAt()), result.marks());
            released = true;
        }
        return released;
    }

    /** Writes a released record, with its marks, for every segment of a claim. */
    public void release(RegistryView view, List<RegistryView.Verdict> segments, SortedMap<Long, Long> marks, String by, String note) {
        long now = clock.getAsLong();
        for (RegistryView.Verdict segment : segments) {
            Claim claim = segment.claim();
            SortedMap<Long, Long> own = new TreeMap<>(marks.subMap(claim.firstWorker(), claim.endWorker()));
            registry.append(claim.withState(Claim.State.RELEASED, now, view.order(segment.entry()), view.registryId(), own,
                    note + (by.isEmpty() ? "" : " (by " + by + ")")));
        }
    }

    /**
     * Carries out a hand-over {@link HandOver#plan planned} on {@code view}, a registry read just
     * before: for {@link HandOver.Kind#HAND_OVER} the source's claims are released with
     * {@code marks} first; then the workers are claimed for the target by the ordinary protocol and
     * recorded as stopped (the target is not running yet: its first start joins the claim, and
     * {@code workers release} of the target needs no --force). The claim inherits the marks, so the
     * target resumes above them even without its seeded changelog.
     *
     * @param target the target's request: its offset is the plan's first worker, its partitions the plan's count
     * @return the target's lease
     * @throws ClaimRefusedException when another application claimed the workers between the release and the claim
     *         (the release stands: whoever holds the workers resumes above the marks)
     */
    public Lease handOver(HandOver plan, RegistryView view, SortedMap<Long, Long> marks, Request target, String by) {
        if (plan.kind() != HandOver.Kind.HAND_OVER && plan.kind() != HandOver.Kind.CLAIM) {
            throw new IllegalArgumentException("nothing to write for a hand-over of kind " + plan.kind());
        }
        if (plan.kind() == HandOver.Kind.HAND_OVER) {
            release(view, plan.released(), marks, by, "handed over to " + plan.target() + " by 'recover'"
                    + (ReleaseCheck.stoppedCleanly(plan.released().stream().map(RegistryView.Verdict::claim).toList())
                    ? "" : " --force (stale claim)"));
        }
        Lease lease;
        try {
            lease = claim(target);
        } catch (ClaimRefusedException e) {
            throw new ClaimRefusedException((plan.kind() == HandOver.Kind.HAND_OVER ? "released workers " + plan.range() + " of "
                    + plan.source() + " with their marks, but could not claim them for " + plan.target() + ": " : "") + e.getMessage());
        }
        heartbeats.stopped(lease);     // the target is not running: the registry's own timeout
        return lease;
    }

    /**
     * Withdraws a claim that lost, unless another instance of the same application wrote a newer
     * record of it meanwhile (then that instance decides for itself).
     */
    private void withdraw(Claim claim, long offset, String registryId, RegistryView.Verdict verdict) {
        Claim winner = verdict == null ? null : verdict.blockedBy();
        if (verdict == null || verdict.entry().offset() == offset) {
            registry.append(claim.withState(Claim.State.WITHDRAWN, clock.getAsLong(), offset, registryId, claim.marks(),
                    "lost to an earlier claim" + (winner == null ? "" : " of " + winner.application())));
        }
        log.info("claim of workers {} lost to an earlier concurrent claim{}: withdrawn, trying again", claim.range(),
                winner == null ? "" : " of application " + winner.application());
    }

    private Lease lease(Request request, long first, List<String> keys, RegistryView view, String how) {
        SortedMap<Long, Long> marks = new TreeMap<>();
        for (long worker = first; worker < first + request.partitions(); worker++) {
            marks.put(worker, view.markOf(request.space(), request.datacenter(), worker));
        }
        return new Lease(first, request.partitions(), List.copyOf(keys), marks, how);
    }


    /**
     * Re-asserts the lease: a heartbeat record for each of its claims, carrying the claim's first
     * offset. A claim missing from the registry (deleted and recreated) is claimed afresh and must
     * be granted again (see {@link LeaseHeartbeat}).
     *
     * @param timeout every wait for Kafka ends by then (the same for every heartbeat: the first one fixes it)
     * @throws RegistryLostException when a claim was released or another application now holds its workers:
     *         the application must stop stamping
     */
    public void heartbeat(Request request, Lease lease, Duration timeout) {
        heartbeats.heartbeat(request, lease, timeout);
    }

    /**
     * Marks the lease's claims as stopped cleanly (the last heartbeat), so that {@code workers release} needs no --force.
     * Every wait for Kafka ends by {@code timeout}: a running application's clean stop passes its heartbeat timeout, so
     * that the stop fits the time a pod is given (a write starts only while a quarter of it is left).
     */
    public void stopped(Lease lease, Duration timeout) {
        heartbeats.stopped(lease, timeout);
    }

    /** Note of the last record of an application that stopped cleanly. */
    public static final String STOPPED_NOTE = "stopped";

    /** Reads the registry; refuses to decide anything while it holds records this version cannot read. */
    public RegistryLog.Snapshot readable() {
        return readable(registry, registry.read());
    }

    /** {@code snapshot}, read from {@code log}, unless it holds records this version cannot read. */
    static RegistryLog.Snapshot readable(RegistryLog log, RegistryLog.Snapshot snapshot) {
        if (!snapshot.unreadable().isEmpty()) {
            throw new SnowstampException("the worker registry " + log.topic() + " holds " + snapshot.unreadable().size()
                    + " unreadable record(s), first " + snapshot.unreadable().get(0) + ": refusing to decide on a registry it cannot read");
        }
        return snapshot;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted while waiting for the worker registry", e);
        }
    }

    @Override
    public void close() {
        try {
            heartbeats.close();
        } finally {
            registry.close();
        }
    }
}
