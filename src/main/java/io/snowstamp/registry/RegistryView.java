package io.snowstamp.registry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the registry says, computed from its records alone: a pure function of the log, so every
 * reader of the same log reaches the same verdict.
 *
 * <p><b>The rule.</b> Keep the newest record of every key (what compaction keeps). Order the active
 * claims by their first offset ({@code claimOffset}, carried forward; a claim's own offset in its
 * first record). Walk them in that order and grant each claim that conflicts with no claim granted
 * before it. Two claims conflict when they are in the same ID space and either use different
 * layouts, or belong to different applications of the same datacenter and share a worker. A
 * released claim still conflicts by layout (its IDs exist), not by range.
 *
 * <p>A released (or withdrawn) claim stays so: a later active record of its key that carries its
 * old place is a write by a holder that read the log before the release and is ignored; only a claim
 * made afresh (a new first record) makes the key active again.
 *
 * <p>Why this is linearizable: whether a claim is granted depends only on the records before its
 * first record, which never change. Later records of other claims either come later in the order
 * (new claims) or keep their place (heartbeats carry {@code claimOffset}). A claimant therefore
 * appends its claim, reads the log to its end, and knows the verdict for good.
 */
public final class RegistryView {
    /** One registry record with its position. */
    public record Entry(long offset, long timestamp, Claim claim) {
    }

    /** A claim and its verdict. */
    public record Verdict(Entry entry, boolean granted, Claim blockedBy) {
        public Claim claim() {
            return entry.claim();
        }
    }

    private final String registryId;
    private final List<Verdict> verdicts = new ArrayList<>();
    private final List<Entry> inactive = new ArrayList<>();
    private final Map<String, Long> firstOffset = new HashMap<>();
    private final Set<String> staleWrites = new HashSet<>();

    /**
     * @param entries    every readable record, in offset order (older records of a key are ignored)
     * @param registryId the id of the registry topic read: {@code claimOffset}s taken in another incarnation are void
     */
    public RegistryView(List<Entry> entries, String registryId) {
        this.registryId = registryId;
        Map<String, Entry> newest = new LinkedHashMap<>();
        for (Entry entry : entries) {
            Entry previous = newest.get(entry.claim().key());
            if (previous != null && previous.claim().state() != Claim.State.ACTIVE && entry.claim().state() == Claim.State.ACTIVE
                    && carriesPlaceFrom(entry, previous.offset())) {
                // a heartbeat (or clean-stop record) of a holder that read the log before the release
                // and wrote after it: the claim stays released (LeaseHeartbeat writes the release again,
                // so that compaction, which keeps only the newest record, keeps it too)
                staleWrites.add(entry.claim().key());
                continue;
            }
            newest.remove(entry.claim().key());
            staleWrites.remove(entry.claim().key());
            // two instances of one application may both write a first record of the same claim: the
            // claim keeps the earlier place (until a heartbeat carries it, before compaction can drop it)
            if (previous != null && previous.claim().state() == Claim.State.ACTIVE && entry.claim().state() == Claim.State.ACTIVE) {
                firstOffset.put(entry.claim().key(), Math.min(firstOffset.getOrDefault(entry.claim().key(), Long.MAX_VALUE),
                        ownOrder(previous)));
            } else {
                firstOffset.remove(entry.claim().key());
            }
            newest.put(entry.claim().key(), entry);
        }
        List<Entry> active = new ArrayList<>();
        for (Entry entry : newest.values()) {
            (entry.claim().state() == Claim.State.ACTIVE ? active : inactive).add(entry);
        }
        active.sort(Comparator.comparingLong(this::order));
        List<Claim> granted = new ArrayList<>();
        for (Entry entry : active) {
            Claim blocker = conflict(entry.claim(), granted).orElse(null);
            if (blocker == null) {
                granted.add(entry.claim());
            }
            verdicts.add(new Verdict(entry, blocker == null, blocker));
        }
    }

    /** Where a claim stands in the order: its first offset when valid in this incarnation, else its own. */
    public long order(Entry entry) {
        return Math.min(ownOrder(entry), firstOffset.getOrDefault(entry.claim().key(), Long.MAX_VALUE));
    }

    /** Whether an active record takes its place from a first record at or before {@code offset} (not a claim made afresh). */
    private boolean carriesPlaceFrom(Entry entry, long offset) {
        long own = ownOrder(entry);
        return own < entry.offset() && own <= offset;
    }

    /**
     * Whether an active record of this key came after its release and was ignored: written by a holder
     * that had read the registry before the release (a heartbeat under way). Compaction would keep that
     * record alone, so the holder writes the release again.
     */
    public boolean releaseOverwritten(String key) {
        return staleWrites.contains(key);
    }

    private long ownOrder(Entry entry) {
        Claim claim = entry.claim();
        return claim.claimOffset() >= 0 && claim.claimOffset() <= entry.offset() && claim.registryId().equals(registryId)
                ? claim.claimOffset() : entry.offset();
    }

    /** The id of the registry topic this view was read from. */
    public String registryId() {
        return registryId;
    }

    private Optional<Claim> conflict(Claim claim, List<Claim> granted) {
        for (Claim other : granted) {
            if (conflicts(claim, other)) {
                return Optional.of(other);
            }
        }
        for (Entry entry : inactive) {
            Claim other = entry.claim();
            if (other.state() == Claim.State.RELEASED && other.space().equals(claim.space()) && !other.layout().equals(claim.layout())) {
                return Optional.of(other);
            }
        }
        return Optional.empty();
    }

    /** Whether two active claims cannot both hold. */
    static boolean conflicts(Claim a, Claim b) {
        if (!a.space().equals(b.space())) {
            return false;
        }
        if (!a.layout().equals(b.layout())) {
            return true;
        }
        return a.datacenter() == b.datacenter() && !a.application().equals(b.application()) && a.overlaps(b.firstWorker(), b.count());
    }

    /** Every active claim with its verdict, in claim order. */
    public List<Verdict> verdicts() {
        return List.copyOf(verdicts);
    }

    /** Released and withdrawn claims, newest record each. */
    public List<Entry> inactive() {
        return List.copyOf(inactive);
    }

    /** The verdict on the claim with this key, if it is active. */
    public Optional<Verdict> verdict(String key) {
        return verdicts.stream().filter(v -> v.claim().key().equals(key)).findFirst();
    }

    /** The granted active claims of an application in a space (any datacenter), lowest worker first. */
    public List<Verdict> heldBy(String space, String application) {
        return verdicts.stream().filter(v -> v.granted() && v.claim().space().equals(space) && v.claim().application().equals(application))
                .sorted(Comparator.comparingLong(v -> v.claim().firstWorker())).toList();
    }

    /** The granted claims of other applications that would conflict with {@code candidate}, in claim order. */
    public List<Claim> conflictsWith(Claim candidate) {
        List<Claim> found = new ArrayList<>();
        for (Verdict verdict : verdicts) {
            if (verdict.granted() && !verdict.claim().application().equals(candidate.application()) && conflicts(candidate, verdict.claim())) {
                found.add(verdict.claim());
            }
        }
        for (Entry entry : inactive) {
            Claim other = entry.claim();
            if (other.state() == Claim.State.RELEASED && other.space().equals(candidate.space()) && !other.layout().equals(candidate.layout())) {
                found.add(other);
            }
        }
        return found;
    }

    /**
     * The lowest first worker of {@code count} consecutive workers that no granted claim of another
     * application holds in this space and datacenter, or -1 when none fits below {@code maxWorker}.
     *
     * @param ignoring claims treated as free (expired ones about to be recycled); may be empty
     */
    public long firstFree(String space, long datacenter, String application, int count, long maxWorker, List<Claim> ignoring) {
        List<Claim> taken = verdicts.stream().filter(Verdict::granted).map(Verdict::claim)
                .filter(c -> c.space().equals(space) && c.datacenter() == datacenter && !c.application().equals(application))
                .filter(c -> !ignoring.contains(c))
                .sorted(Comparator.comparingLong(Claim::firstWorker)).toList();
        long candidate = 0;
        for (Claim claim : taken) {
            if (claim.overlaps(candidate, count)) {
                candidate = Math.max(candidate, claim.endWorker());
            }
        }
        // one pass over ranges sorted by start moves the candidate past each overlapping range in turn
        return candidate + count - 1 <= maxWorker ? candidate : -1;
    }

    /**
     * The highest mark recorded for this worker (-1: none): new holders resume above it. Released
     * claims record marks; claims over released workers carry the marks they inherited, so a claim
     * record that replaces a released one under the same key keeps them.
     */
    public long markOf(String space, long datacenter, long worker) {
        long mark = -1;
        List<Entry> all = new ArrayList<>(inactive);
        verdicts.forEach(verdict -> all.add(verdict.entry()));
        for (Entry entry : all) {
            Claim claim = entry.claim();
            if (claim.space().equals(space) && claim.datacenter() == datacenter && claim.overlaps(worker, 1)) {
                mark = Math.max(mark, claim.markOf(worker));
            }
        }
        return mark;
    }
}
