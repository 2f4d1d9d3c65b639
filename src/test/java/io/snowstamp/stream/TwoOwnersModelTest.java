package io.snowstamp.stream;

import io.snowstamp.ownership.Issuer;
import io.snowstamp.ownership.WriteAhead;

import io.snowstamp.id.IdGenerator;
import io.snowstamp.id.IdLayout;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.testing.VirtualWorld;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Never issued twice" as a statement about ID values, checked on the real {@link Issuer}, {@link WriteAhead},
 * {@link LeaseGuard}, {@link PartitionLease} and {@link IdGenerator} (design.md, "The ownership lease"): an old owner
 * that keeps stamping under {@code at_least_once} (nothing fences it) and a new owner that takes the partition over,
 * in a {@link VirtualWorld} where
 *
 * <ul>
 *   <li>the two wall clocks are up to 10 s apart (the generators read them), and the two monotonic clocks each run
 *       within 2 % of real time (the lease reads them);</li>
 *   <li>either owner may stop at any step of an ID — before the check, between the check and the ID, between the ID and
 *       its reservation, before it leaves — for up to 4 s, as a GC pause or SIGSTOP does, its whole process with it
 *       (lease rounds and acknowledgements wait too) or its stream thread alone;</li>
 *   <li>the changelog's writes land and are acknowledged after random delays (some of seconds: a slow follower, a
 *       retry), lease rounds are answered after random delays or not at all.</li>
 * </ul>
 *
 * It asserts that the old owner's last ID is below the new owner's first (so the two owners' IDs are disjoint whatever
 * their clocks), and that each owner's IDs increase. Mutating {@link Issuer} shows it can fail: without the wait for an
 * acknowledged reservation, or without the check after the ID, some schedules forward an old owner's ID above the new
 * owner's first (a handful of the 400; the schedules are the same on every run, seeded by their number); without
 * {@code resumeAbove(highestCovered)} in {@link Issuer}, one does (its new owner restores again after a late write of the
 * old owner, finds its own record the newest, and its wall clock is seconds behind: it issues only after 8 s, hence
 * {@link #HORIZON}). A longer horizon only adds events after the shorter one's end, so a schedule that fails at one
 * horizon fails at every longer one. A second run
 * sends the old owner's lease rounds, from shortly before the handover, to a changelog leader that was replaced without
 * knowing it; without the rule that a reservation covers IDs only once a confirming round read past it
 * ({@link ReadPastAcks}), a few dozen of its schedules fail. The changelog is a list of records; a restore reads its newest
 * record (what compaction keeps), a lease round reads it to the end the leader reported when it answered.
 */
class TwoOwnersModelTest {
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000 * MS;
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final long WORKER = 7;
    private static final long BASE_WALL_MILLIS = 1_800_000_000_000L;
    private static final long RESERVATION_UNITS = 1_000;    // id.reservation=1s in 1 ms units
    private static final int SCHEDULES = 400;
    /**
     * How long each schedule runs. Long enough for a new owner that found the partition's newest record to be its own
     * (restored again after a late write of the old owner) to issue: at 8 s the schedule that needs
     * {@code resumeAbove(highestCovered)} ended before its new owner's first ID.
     */
    private static final long HORIZON = 14 * SECOND;

    /** One record of the partition's changelog: a worker state, reduced to what the lease and the resume read. */
    private record Written(LeaseMark mark, long covered) {
    }

    /** One owner process: its clocks, its IDs, and whether it is frozen. */
    private final class Owner {
        final String name;
        final VirtualWorld.Actor thread;
        final long wallOffsetMillis;
        final List<Long> forwarded = new ArrayList<>();
        long frozenUntil;
        /** The step at which this owner stops next (null: only the random pauses). */
        Issuer.Step pauseAt;
        long slowFrom;
        long slowUntil;
        String stopped;
        /** When this owner's producer last appended: its writes land in the order it sent them. */
        long lastAppend;
        PartitionLease lease;
        int readUpTo;
        /** Whether this owner's lease rounds reach only the replaced leader, which answers {@link #staleEnd}. */
        boolean deposed;

        Owner(String name, VirtualWorld.Actor thread, long wallOffsetMillis) {
            this.name = name;
            this.thread = thread;
            this.wallOffsetMillis = wallOffsetMillis;
        }

        long wallMillis() {
            return BASE_WALL_MILLIS + world.now() / MS + wallOffsetMillis;
        }
    }

    private VirtualWorld world;
    private Random random;
    private final List<Written> changelog = new ArrayList<>();
    private long epochsTaken;
    /** The end a replaced leader that does not know it reports: the changelog's size when it was replaced (-1: not replaced). */
    private int staleEnd;

    @Test
    void shouldNeverLetTwoOwnersForwardTheSameId() {
        check(false, SCHEDULES);
    }

    /**
     * The old owner's lease rounds reach, from a moment before the handover on, only a changelog leader that was replaced
     * without knowing it (cut off from the controller and its followers): it answers with the end it had then, so those
     * rounds never show the new lease and keep confirming the old one, while the old owner's writes are acknowledged by
     * the new leader (its producer found it). Only the rule that a reservation covers IDs once a confirming round read
     * past it keeps the old owner's IDs below the new owner's.
     */
    @Test
    void shouldNeverLetTwoOwnersForwardTheSameIdWhileTheOldOwnersRoundsReachADeposedLeader() {
        check(true, SCHEDULES / 2);
    }

    /** Runs schedules 0 .. {@code schedules - 1} (the {@code full} tier's soak runs more of them: TwoOwnersModelSoakIT). */
    void check(boolean deposed, int schedules) {
        int collided = 0;
        int above = 0;
        long forwarded = 0;
        List<String> failures = new ArrayList<>();
        for (int schedule = 0; schedule < schedules; schedule++) {
            Result result = run(schedule, deposed);
            forwarded += result.old.size() + result.next.size();
            Set<Long> both = new HashSet<>(result.old);
            both.retainAll(new HashSet<>(result.next));
            if (!both.isEmpty()) {
                collided++;
                if (failures.size() < 5) {
                    failures.add("schedule " + schedule + ": " + both.size() + " IDs forwarded by both, e.g. " + both.iterator().next()
                            + " (" + LAYOUT.decode(both.iterator().next()) + ")");
                }
            }
            // stronger, and what makes the IDs disjoint whatever the clocks: the old owner's last ID is below the new
            // owner's first, even where a new owner's clock far ahead would have kept them apart anyway
            if (!result.old.isEmpty() && !result.next.isEmpty() && result.old.get(result.old.size() - 1) >= result.next.get(0)) {
                above++;
                if (failures.size() < 5) {
                    failures.add("schedule " + schedule + ": the old owner's last ID " + LAYOUT.decode(result.old.get(result.old.size() - 1))
                            + " is not below the new owner's first " + LAYOUT.decode(result.next.get(0)));
                }
            }
            assertThat(result.old).as("schedule %d: the old owner's IDs increase", schedule).isSorted().doesNotHaveDuplicates();
            assertThat(result.next).as("schedule %d: the new owner's IDs increase", schedule).isSorted().doesNotHaveDuplicates();
        }
        System.out.println("model: " + schedules + " schedules, " + forwarded + " IDs forwarded, " + collided + " collided, "
                + above + " with the old owner's last ID not below the new owner's first");
        assertThat(forwarded).as("the schedules stamp").isGreaterThan(schedules * 100L);
        assertThat(failures).as("schedules in which both owners forwarded an ID (%d of %d) or the old owner's last ID was not below"
                + " the new owner's first (%d)", collided, schedules, above).isEmpty();
    }

    private record Result(List<Long> old, List<Long> next) {
    }

    private Result run(long seed, boolean deposed) {
        world = new VirtualWorld();
        random = new Random(seed);
        changelog.clear();
        epochsTaken = 0;
        staleEnd = -1;
        Owner old = owner("old", 0);
        // up to 10 s apart, mostly behind by up to 3 s: a new owner whose wall clock is ahead issues above the old owner's
        // IDs whatever the lease does, and one far behind stays in one time unit just above the old owner's reservation
        Owner next = owner("new", random.nextBoolean() ? random.nextInt(20_001) - 10_000 : -random.nextInt(3_000));
        // the old owner stamps from the start; the new one takes the partition over 2-4 s later (the old one was
        // evicted by its group, or cut off from it: it does not know)
        long handover = 2 * SECOND + (long) (random.nextDouble() * 2 * SECOND);
        old.thread.start(0, () -> stamp(old));
        next.thread.start(handover, () -> stamp(next));
        // and at about that moment, the old owner stops at one of the steps of an ID (besides the random pauses)
        world.at(handover - (long) (random.nextDouble() * SECOND), () -> old.pauseAt = Issuer.Step.values()[random.nextInt(4)]);
        // and the writes it sends around then may land seconds late (a slow follower, a retry)
        old.slowFrom = handover - SECOND;
        old.slowUntil = handover + SECOND / 2;
        if (deposed) {
            // the changelog's leader is replaced before the new owner writes its lease; the old owner's rounds reach only
            // the replaced one from then on
            world.at(handover - (long) (random.nextDouble() * SECOND), () -> {
                staleEnd = changelog.size();
                old.deposed = true;
            });
        }
        world.runUntil(HORIZON);
        return new Result(old.forwarded, next.forwarded);
    }

    private Owner owner(String name, long wallOffsetMillis) {
        double rate = 1 + (random.nextDouble() * 2 - 1) * 0.02;
        Owner owner = new Owner(name, world.actor(name, rate, random.nextLong() >>> 2), wallOffsetMillis);
        long first = (long) (random.nextDouble() * 200 * MS);
        world.at(first, () -> round(owner));
        return owner;
    }

    /** An owner's stream thread: takes the lease after a restore, then stamps until the lease says no. */
    private void stamp(Owner owner) {
        while (true) {
            try {
                startAndStamp(owner);
                return;
            } catch (TaskCorruptedException e) {
                // the previous owner wrote after this restore: restore again (Kafka Streams does)
            } catch (TaskMigratedException e) {
                owner.stopped = e.getMessage() + " at " + world.now() / MS + " ms";
                return;         // lost, lapsed, or unacknowledged: this owner never issues again
            }
        }
    }

    private void startAndStamp(Owner owner) {
        // restore: the newest record (what compaction keeps) up to the end the restore read to
        int restoreEnd = changelog.size();
        Written restored = restoreEnd == 0 ? new Written(new LeaseMark(0, ""), -1) : changelog.get(restoreEnd - 1);
        long highestSeen = owner.lease == null ? -1 : LeaseRounds.highestEpoch(owner.lease);
        LeaseMark mine = new LeaseMark(Math.max(restored.mark().epoch(), highestSeen) + 1, owner.name + "#" + (++epochsTaken));
        PartitionLease lease = new PartitionLease(0, mine, restoreEnd, LeaseRounds.TERM_NANOS, LeaseRounds.TAKEOVER_WAIT_NANOS);
        owner.lease = lease;
        owner.readUpTo = 0;     // a new lease reads the partition from its start
        append(owner, new Written(mine, restored.covered()), offset -> { });
        LeaseGuard guard = LeaseGuard.of(lease, new TaskId(0, 0), owner.name, owner.thread);
        IdGenerator generator = new IdGenerator(LAYOUT, 0, WORKER, owner::wallMillis);
        generator.resumeAbove(restored.covered());
        long[] lastIssued = {-1};
        WriteAhead[] ahead = new WriteAhead[1];
        ahead[0] = new WriteAhead(LAYOUT, 0, WORKER, RESERVATION_UNITS, 0, guard, until -> {
            if (!guard.mayWrite()) {
                return false;
            }
            WriteAhead mineAhead = ahead[0];
            append(owner, new Written(mine, Math.max(until, lastIssued[0])),
                    offset -> deliver(owner, world.now() + latency(), () -> mineAhead.acknowledged(until, offset)));
            return true;
        }, owner.name, nanos -> { });
        ahead[0].renew(Math.max(generator.lastTime(), LAYOUT.unitsSinceEpoch(owner.wallMillis())));
        Issuer issuer = new Issuer(guard, generator, ahead[0], step -> maybePause(owner, step));
        while (true) {
            long id = issuer.issue();
            lastIssued[0] = id;
            owner.forwarded.add(id);
            owner.thread.park((long) (random.nextDouble() * 4 * MS));
            if (random.nextInt(50) == 0) {
                // the renewal punctuation
                ahead[0].renew(Math.max(generator.lastTime(), LAYOUT.unitsSinceEpoch(owner.wallMillis())));
            }
        }
    }

    /** Now and then a pause of up to 4 s: the whole process (its lease rounds and acknowledgements too) or its thread. */
    private void maybePause(Owner owner, Issuer.Step step) {
        if (owner.pauseAt == step) {
            owner.pauseAt = null;
        } else if (random.nextInt(400) != 0) {
            return;
        }
        long pause = (long) (random.nextDouble() * 4 * SECOND);
        if (random.nextBoolean()) {
            owner.frozenUntil = Math.max(owner.frozenUntil, world.now() + pause);
        }
        owner.thread.park(pause);
    }

    /** Appends a record as the owner's producer does, in its order, after a delay; tells {@code appended} its offset then. */
    private void append(Owner owner, Written record, java.util.function.LongConsumer appended) {
        boolean trap = world.now() >= owner.slowFrom && world.now() < owner.slowUntil && random.nextBoolean();
        long at = Math.max(owner.lastAppend, world.now() + (trap ? SECOND + (long) (random.nextDouble() * 2 * SECOND) : latency()));
        owner.lastAppend = at;
        world.at(at, () -> {
            changelog.add(record);
            appended.accept(changelog.size() - 1);
        });
    }

    /** Runs an owner's callback when its process can: not while it is frozen. */
    private void deliver(Owner owner, long at, Runnable action) {
        world.at(at, () -> {
            if (world.now() < owner.frozenUntil) {
                deliver(owner, owner.frozenUntil, action);
            } else {
                action.run();
            }
        });
    }

    /** Mostly a few milliseconds; one in ten up to 3 s (a slow follower, a retry). */
    private long latency() {
        return random.nextInt(10) == 0 ? (long) (random.nextDouble() * 3 * SECOND) : (long) (random.nextDouble() * 20 * MS);
    }

    /**
     * An owner's verifier: one round at a time, at most every 200 ms of real time — the committed end asked at send
     * time, answered after a delay (or not at all: the round gives up after 750 ms), then the changelog read up to that
     * end and the lease confirmed with the send time. Nothing runs while the process is frozen.
     */
    private void round(Owner owner) {
        if (world.now() < owner.frozenUntil || owner.lease == null) {
            world.at(Math.max(owner.frozenUntil, world.now() + 200 * MS), () -> round(owner));
            return;
        }
        PartitionLease lease = owner.lease;
        long sentAt = world.now();
        long send = owner.thread.nanoTime();
        if (random.nextInt(20) == 0) {
            world.at(sentAt + 750 * MS, () -> round(owner));    // no answer in time
            return;
        }
        long answer = random.nextInt(20) == 0 ? (long) (random.nextDouble() * 2 * SECOND) : (long) (random.nextDouble() * 20 * MS);
        world.at(world.now() + answer, () -> {
            int end = owner.deposed ? staleEnd : changelog.size();
            deliver(owner, world.now() + (long) (random.nextDouble() * 5 * MS), () -> {
                if (owner.lease == lease) {
                    for (int offset = owner.readUpTo; offset < end; offset++) {
                        Written record = changelog.get(offset);
                        LeaseRounds.observe(lease, offset, record.mark(), record.covered());
                    }
                    owner.readUpTo = Math.max(owner.readUpTo, end);
                    LeaseRounds.confirmed(lease, send, owner.thread.nanoTime(), end);
                }
                world.at(Math.max(world.now(), sentAt + 200 * MS), () -> round(owner));
            });
        });
    }
}
