package io.snowstamp.sequence;

import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.lease.LeaseCodec;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.Leases;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.state.IdHeader;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.ownership.WriteAcks;
import io.snowstamp.testing.TestConfig;
import io.snowstamp.testing.VirtualWorld;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "A number is never forwarded twice for a tag", checked on the real {@link SequenceProcessor} (segments and their
 * acknowledgements, {@link SegmentAcks}; the lease, {@link LeaseGuard}; the clean-close marker; {@link ResumeRule};
 * {@link SegmentStore#resumeAboveSegments}; the per-tag raise from the lease reader; the tail read at the start and at
 * the first number) under {@code at_least_once}, where nothing fences an old owner: three owners take one partition in a
 * row, in a {@link VirtualWorld}, each ending cleanly (the task closed: the marker), by a crash (nothing more from it,
 * its writes in flight still land), or as a zombie (it goes on until its lease reader shows the newer lease), with
 *
 * <ul>
 *   <li>pauses of up to 4 s at every step — before a record, right after a segment's reservation was handed to the
 *       producer, between a number and its record's send, before a tail read, before the close — of the whole process
 *       (its lease rounds and acknowledgements too) or its stream thread alone;</li>
 *   <li>changelog and output writes that land after random delays (some of seconds, and a few around each handover
 *       later still: a slow follower, a retry), each producer's writes in the order it sent them;</li>
 *   <li>lease rounds answered after random delays or not at all; monotonic clocks within 2 % of real time.</li>
 * </ul>
 *
 * The changelog is a list of records; a restore reads, per key, the newest record up to the end it read to (what
 * compaction keeps); a lease round reads it to the end reported when it was answered. The output partition is a list of
 * (tag, number) records, which the tail reads. Which rule removed makes which run fail: design.md, "Sequence numbers at
 * the value level".
 */
class SequenceOwnersModelTest {
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000 * MS;
    private static final long BASE_WALL_MILLIS = 1_800_000_000_000L;
    private static final String[] TAGS = {"order", "refund", "invoice"};
    private static final LeaseCodec CODEC = SequenceTopology.leaseCodec();
    private static final SequenceStateSerde STATES = new SequenceStateSerde();
    private static final StringSerializer KEYS = new StringSerializer();
    /** Schedules of the default suite; the {@code full} tier's soak runs more. */
    private static final int SCHEDULES = 150;
    /**
     * Schedules past the default range that the default run adds, each of which forwards a number twice without a rule
     * the default range alone no longer reaches (found by running schedules 150..1199 with the rule removed): the writes
     * at a start above the segments (304, 363), the {@code issued} writes before the marker (305, 382).
     */
    private static final List<Long> PINNED = List.of(304L, 305L, 363L, 382L);
    /**
     * Schedules of the idle zombie's test (8.5-9.5 s of the class's 17-18.5 on a shared 2-core machine), and past them the
     * ones a removed check of the lease before a write fails besides 65 and 96 (found in schedules 0..399): the tail
     * read again at a first number (306), a checkpoint of the second owner (342).
     */
    private static final int IDLE_SCHEDULES = 200;
    private static final List<Long> IDLE_PINNED = List.of(306L, 342L);

    private enum Ending { CLEAN, CRASH, ZOMBIE }

    private enum Step { RECORD, RESERVED, FORWARD, TAIL, CLOSE }

    /** The end of a crashed process's stream thread. */
    private static final class Crashed extends Error {
        Crashed() {
            super(null, null, false, false);
        }
    }

    private record Written(String key, byte[] keyBytes, byte[] value) {
    }

    private final class Owner {
        final String name;
        final VirtualWorld.Actor thread;
        final Map<String, List<Long>> forwarded = new HashMap<>();
        final WriteAcks acks;
        Ending ending;
        long endAt = Long.MAX_VALUE;
        Step pauseAt;
        long slowFrom = Long.MAX_VALUE;
        long slowUntil;
        long frozenUntil;
        boolean crashed;
        long lastChangelog;
        long lastLease;
        long lastOutput;
        int restoreEnd;
        PartitionLease lease;
        int readUpTo;
        /** From when its input has no record (its punctuations still run); never in the random schedules. */
        long idleFrom = Long.MAX_VALUE;
        /** Store writes it sent after its lease reader showed a newer lease. */
        int writesAfterLost;

        Owner(String name, VirtualWorld.Actor thread) {
            this.name = name;
            this.thread = thread;
            this.acks = WriteAcks.of(SequenceNames.changelogTopic(APPLICATION));
        }

        long wallMillis() {
            return BASE_WALL_MILLIS + world.now() / MS;
        }

        void check() {
            if (crashed) {
                throw new Crashed();
            }
        }
    }

    private static final String APPLICATION = new MockProcessorContext<>().applicationId();

    private VirtualWorld world;
    private Random random;
    private final List<Written> changelog = new ArrayList<>();
    private final List<Map.Entry<String, Long>> output = new ArrayList<>();
    private int trustedMarkers;

    @Test
    void shouldNeverForwardANumberTwiceForATagAcrossThreeOwners() {
        check(SCHEDULES);
    }

    /** Runs schedules 0 .. {@code schedules - 1} (the soak of the {@code full} tier runs more of them: SequenceOwnersModelSoakIT). */
    void check(int schedules) {
        int failed = 0;
        long forwarded = 0;
        int markers = 0;
        List<String> failures = new ArrayList<>();
        List<Long> seeds = new ArrayList<>();
        for (long schedule = 0; schedule < schedules; schedule++) {
            seeds.add(schedule);
        }
        PINNED.stream().filter(seed -> seed >= schedules).forEach(seeds::add);
        for (long schedule : seeds) {
            List<Owner> owners = run(schedule);
            markers += trustedMarkers;
            List<String> twice = twice(owners);
            for (Owner owner : owners) {
                forwarded += owner.forwarded.values().stream().mapToLong(List::size).sum();
            }
            if (!twice.isEmpty()) {
                failed++;
                if (failures.size() < 5) {
                    failures.add("schedule " + schedule + " (" + owners.get(0).ending + ", " + owners.get(1).ending + "): "
                            + twice.size() + " numbers forwarded twice, e.g. " + twice.subList(0, Math.min(3, twice.size())));
                }
            }
        }
        System.out.println("sequence model: " + schedules + " schedules, " + forwarded + " numbers forwarded, " + markers
                + " starts after a trusted marker, " + failed + " schedules with a number forwarded twice");
        assertThat(forwarded).as("the schedules number").isGreaterThan(schedules * 100L);
        assertThat(markers).as("some starts resume inside the segments after a marker").isGreaterThan(schedules / 10);
        assertThat(failures).as("schedules in which a number of a tag was forwarded twice (%d of %d)", failed, seeds.size())
                .allMatch(failure -> KNOWN_OPEN.stream().anyMatch(known -> failure.startsWith("schedule " + known + " ")));
    }

    /**
     * Schedule 1279, run 10 s longer so that the third owner numbers the tag (the soak found the shape first as schedule
     * 305, which the checkpoint's wait for the first number's tail read changed): the first owner's clean close (the tag
     * writes and the marker, sent after the revocation's commit and flushed by nothing before the partition moves on) lands
     * late, after the second owner reserved "refund" 1001..2000 and numbered 1001; the restore keeps the first owner's
     * lower write as the tag's newest value. The third resumes above 2000, the segment its lease reader read in the log,
     * not above the restored 1000 (without the raise from the lease: 1001 twice).
     */
    @Test
    void shouldResumeAboveASegmentThatAnOlderHoldersLateWriteHidFromTheRestore() {
        List<Owner> owners = run(1279, 15 * SECOND);

        Owner third = owners.get(2);
        List<Long> refund = new ArrayList<>();
        for (Written record : changelog.subList(0, third.restoreEnd)) {
            if (record.key().equals("refund")) {
                refund.add(((SequenceState.TagSegment) STATES.deserialize(null, record.value())).maxId());
            }
        }
        assertThat(refund).as("the schedule still hides the second owner's segment behind the first owner's late write")
                .contains(2000L).endsWith(1000L);
        assertThat(owners.get(1).forwarded.get("refund")).as("the second owner numbered in 1001..2000").contains(1001L);
        assertThat(third.forwarded.get("refund")).as("the third owner numbers the tag, above the hidden segment")
                .isNotEmpty().allMatch(number -> number > 2000);
        assertThat(twice(owners)).isEmpty();
    }

    /**
     * A zombie whose input went idle at the handover: no record checks its lease, and its periodic checkpoint would go on
     * writing the tags it advanced and a checkpoint of its old epoch after the new owner's lease record — late lower
     * writes that become the newest value of their keys. Once its lease reader showed the newer lease, it writes nothing:
     * nor does any other owner. Each write checks again, since the one before it can hold the thread (schedule 65: a
     * checkpoint's first tag write paused 2.4 s, the newer lease showed meanwhile, and the next tag and the checkpoint
     * went out), as can the tail read at a first number (96: a record in flight at the handover reserved after it).
     */
    @Test
    void shouldWriteNothingOnceAZombieWithIdleInputSawTheNewerLease() {
        int zombies = 0;
        List<String> writes = new ArrayList<>();
        List<Long> seeds = new ArrayList<>(IDLE_PINNED);
        for (long seed = 0; seed < IDLE_SCHEDULES; seed++) {
            seeds.add(seed);
        }
        for (long seed : seeds) {
            List<Owner> owners = run(seed, 5 * SECOND, true);
            for (Owner owner : owners) {
                if (owner.writesAfterLost > 0) {
                    writes.add("schedule " + seed + ": " + owner.writesAfterLost + " by the " + owner.name + " owner (" + owner.ending
                            + (owner == owners.get(0) ? ", idle" : "") + ")");
                }
            }
            Owner first = owners.get(0);
            if (first.ending == Ending.ZOMBIE && first.lease != null && first.lease.lostTo() != null) {
                zombies++;
            }
        }
        assertThat(writes).as("store writes sent after their owner's lease reader showed the newer lease").isEmpty();
        assertThat(zombies).as("schedules whose first owner is an idle zombie that saw the newer lease").isGreaterThan(IDLE_SCHEDULES / 10);
    }

    /** Each number of a tag that more than one owner (or one owner twice) forwarded, as "tag number". */
    private static List<String> twice(List<Owner> owners) {
        Map<String, Set<Long>> seen = new HashMap<>();
        List<String> twice = new ArrayList<>();
        for (Owner owner : owners) {
            owner.forwarded.forEach((tag, numbers) -> numbers.forEach(number -> {
                if (!seen.computeIfAbsent(tag, t -> new HashSet<>()).add(number)) {
                    twice.add(tag + " " + number);
                }
            }));
        }
        return twice;
    }

    /**
     * Schedules that still forward a number twice, found by the soak and not yet closed (design.md names them): any
     * other schedule failing fails the test, and a fix removes its number here. None at present.
     */
    static final List<Long> KNOWN_OPEN = List.of();

    private List<Owner> run(long seed) {
        return run(seed, 5 * SECOND);
    }

    private List<Owner> run(long seed, long after) {
        return run(seed, after, false);
    }

    /**
     * Runs schedule {@code seed} until {@code after} past the third owner's start (the same events, only more of them);
     * {@code idleFirst}: the first owner's input has no record from the handover on.
     */
    private List<Owner> run(long seed, long after, boolean idleFirst) {
        world = new VirtualWorld();
        random = new Random(seed);
        changelog.clear();
        output.clear();
        trustedMarkers = 0;
        List<Owner> owners = List.of(owner("first"), owner("second"), owner("third"));
        long step = new long[] {10, 100, 1000}[random.nextInt(3)];
        long start = 0;
        for (int i = 0; i < owners.size(); i++) {
            Owner owner = owners.get(i);
            owner.thread.start(start, () -> stamp(owner, step));
            if (i + 1 == owners.size()) {
                break;
            }
            // the second owner takes over 2.5-5 s after the first started; the third 0.5-3.5 s after the second (sometimes
            // before the second's first number: its takeover wait)
            long next = start + (i == 0 ? 2_500 * MS : 500 * MS) + (long) (random.nextDouble() * (i == 0 ? 2.5 : 3) * SECOND);
            end(owner, next);
            if (idleFirst && i == 0) {
                owner.idleFrom = next;
            }
            start = next;
        }
        world.runUntil(start + after);
        return owners;
    }

    /** How {@code owner} ends around the handover at {@code next}. */
    private void end(Owner owner, long next) {
        // a clean close half the time: the marker, and what the next owner may trust of it, is what most rules guard
        owner.ending = random.nextBoolean() ? Ending.CLEAN : random.nextBoolean() ? Ending.CRASH : Ending.ZOMBIE;
        switch (owner.ending) {
            // the group revokes the task before it assigns it: the close (and its marker) comes first, landing when it lands
            case CLEAN -> owner.endAt = next - (long) (random.nextDouble() * 300 * MS);
            case CRASH -> world.at(next - (long) (random.nextDouble() * SECOND), () -> owner.crashed = true);
            case ZOMBIE -> {
                // evicted, or cut off from its group: it does not know, stops at one of its steps about then, and what it
                // sends around then may land seconds late
                world.at(next - (long) (random.nextDouble() * SECOND), () -> owner.pauseAt = Step.values()[random.nextInt(4)]);
                owner.slowFrom = next - SECOND;
                owner.slowUntil = next + SECOND / 2;
            }
        }
    }

    private Owner owner(String name) {
        double rate = 1 + (random.nextDouble() * 2 - 1) * 0.02;
        Owner owner = new Owner(name, world.actor(name, rate, random.nextLong() >>> 2));
        world.at((long) (random.nextDouble() * 200 * MS), () -> round(owner));
        return owner;
    }

    /** An owner's stream thread: restores, starts the task (which takes the lease), numbers until it ends. */
    private void stamp(Owner owner, long step) {
        try {
            numberUntilTheEnd(owner, step);
        } catch (Crashed e) {
            // nothing more from this process
        }
    }

    private void numberUntilTheEnd(Owner owner, long step) {
        owner.restoreEnd = changelog.size();
        Map<String, SequenceState> restored = new TreeMap<>();
        for (Written record : changelog.subList(0, owner.restoreEnd)) {
            restored.put(record.key(), STATES.deserialize(null, record.value()));
        }
        ModelStore<SequenceState> segments = new ModelStore<>(SequenceNames.STORE, (key, value) -> sent(owner, key, value));
        segments.restore(restored);
        // forwarded records go to the model's output partition (a context typed <byte[], ...> cannot override forward)
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>() {
            @Override
            public <K, V> void forward(Record<K, V> record) {
                forwardRecord(owner, record);
            }
        };
        context.addStateStore(segments);
        context.addStateStore(new ModelStore<byte[]>(SequenceNames.TAGS_STORE, (key, value) -> { }));
        SnowstampConfig config = TestConfig.of(Keys.ID_MODE, "sequence", Keys.PROCESSING_GUARANTEE, "at_least_once",
                Keys.INSTANCE_ID, owner.name, Keys.BOOTSTRAP_SERVERS, "dummy:9092", Keys.SEQUENCE_CHECKPOINT_INTERVAL, "300ms");
        PartitionCheckpoint before = restored.get(SequenceState.CHECKPOINT_KEY) instanceof PartitionCheckpoint c ? c : PartitionCheckpoint.NONE;
        SequenceProcessor processor = new SequenceProcessor(config.sequence(), config.stamp(), config.connection(), 1,
                owner::wallMillis, tail(owner), leases(owner, before), owner.acks, null);
        processor.init(typed(context));
        TagDefinition definition = new TagDefinition(1, step, 1, BASE_WALL_MILLIS);
        long nextPunctuation = world.now() + 300 * MS;
        while (true) {
            owner.check();
            if (world.now() >= owner.endAt) {
                maybePause(owner, Step.CLOSE);
                processor.close();
                return;
            }
            if (world.now() >= nextPunctuation) {
                nextPunctuation = world.now() + 300 * MS;
                context.scheduledPunctuators().stream().filter(p -> !p.cancelled())
                        .forEach(p -> p.getPunctuator().punctuate(owner.wallMillis()));
            }
            if (world.now() >= owner.idleFrom) {
                owner.thread.park(50 * MS);     // no input: nothing checks the lease but what the punctuations do
                continue;
            }
            if (owner.lease.awaitingTakeover()) {
                // the input waits beside the thread until the previous owner's last term is over (runtime/TakeoverHold):
                // the thread can close the task meanwhile
                owner.thread.park(5 * MS);
                continue;
            }
            maybePause(owner, Step.RECORD);
            String tag = TAGS[random.nextInt(10) < 6 ? 0 : 1 + random.nextInt(2)];
            byte[] key = tag.getBytes(StandardCharsets.UTF_8);
            byte[] envelope = new Envelope(key, "{}".getBytes(StandardCharsets.UTF_8), definition).encode();
            try {
                processor.process(new Record<>(key, envelope, owner.wallMillis()));
            } catch (TaskMigratedException e) {
                processor.close();      // Kafka Streams closes the task dirty, and rejoins: the partition is elsewhere by now
                return;
            }
            owner.thread.park((long) (random.nextDouble() * 2 * MS));
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ProcessorContext<byte[], StampedValue> typed(MockProcessorContext<Object, Object> context) {
        return (ProcessorContext) context;
    }

    /** A number left the task: it is issued; its record lands in the output partition when the producer gets it there. */
    private void forwardRecord(Owner owner, Record<?, ?> record) {
        owner.check();
        String tag = new String(record.headers().lastHeader(IdHeader.TAG).value(), StandardCharsets.UTF_8);
        long number = Long.parseLong(new String(record.headers().lastHeader(IdHeader.ID).value(), StandardCharsets.US_ASCII));
        owner.forwarded.computeIfAbsent(tag, t -> new ArrayList<>()).add(number);
        maybePause(owner, Step.FORWARD);
        owner.lastOutput = landAt(owner, owner.lastOutput);
        world.at(owner.lastOutput, () -> output.add(Map.entry(tag, number)));
    }

    /** A store write of the task: handed to Kafka Streams' producer, acknowledged after it landed. */
    private void sent(Owner owner, String key, SequenceState value) {
        owner.check();
        if (owner.lease != null && owner.lease.lostTo() != null) {
            owner.writesAfterLost++;
        }
        byte[] keyBytes = KEYS.serialize(null, key);
        byte[] bytes = STATES.serialize(null, value);
        LongConsumer acknowledged = owner.acks.onSend(SequenceNames.changelogTopic(APPLICATION), 0, keyBytes, bytes);
        owner.lastChangelog = landAt(owner, owner.lastChangelog);
        world.at(owner.lastChangelog, () -> {
            changelog.add(new Written(key, keyBytes, bytes));
            long offset = changelog.size() - 1;
            if (acknowledged != null) {
                deliver(owner, world.now() + latency(), () -> acknowledged.accept(offset));
            }
        });
        if (value instanceof SequenceState.TagSegment) {
            maybePause(owner, Step.RESERVED);
        }
    }

    /** When a write sent now lands: after the producer's previous one, mostly soon, around a zombie's handover often late. */
    private long landAt(Owner owner, long previous) {
        boolean trap = world.now() >= owner.slowFrom && world.now() < owner.slowUntil && random.nextBoolean();
        return Math.max(previous, world.now() + (trap ? SECOND + (long) (random.nextDouble() * 2 * SECOND) : latency()));
    }

    /** The output partition as the tail reads it, after a read of up to 20 ms (or a pause). */
    private SequenceTail tail(Owner owner) {
        return new SequenceTail() {
            @Override
            public Scan scan(int partition, long fromOffset) {
                maybePause(owner, Step.TAIL);
                owner.thread.park((long) (random.nextDouble() * 20 * MS));
                owner.check();
                int from = (int) Math.max(0, fromOffset);
                int end = output.size();
                Map<String, Long> highest = new HashMap<>();
                for (Map.Entry<String, Long> record : output.subList(Math.min(from, end), end)) {
                    highest.merge(record.getKey(), record.getValue(), Math::max);
                }
                return new Scan(highest, Math.max(0, end - from), from, end, 1);
            }

            @Override
            public long endOffset(int partition) {
                return output.size();
            }
        };
    }

    /** The owner's lease: its record written by the lease producer, then verified by {@link #round}. */
    private Leases leases(Owner owner, PartitionCheckpoint restored) {
        return (task, partition, mine, key, value, name, restoreAgain) -> {
            if (restored.closed() && mine.epoch() == restored.epoch() + 1) {
                trustedMarkers++;
            }
            PartitionLease lease = new PartitionLease(0, mine, PartitionLease.NO_RESTORE_CHECK, owner.restoreEnd,
                    LeaseRounds.TERM_NANOS, LeaseRounds.TAKEOVER_WAIT_NANOS);
            owner.lease = lease;
            owner.readUpTo = 0;
            owner.lastLease = landAt(owner, owner.lastLease);
            world.at(owner.lastLease, () -> changelog.add(new Written(SequenceState.CHECKPOINT_KEY, key, value)));
            return LeaseGuard.of(lease, task, name, owner.thread);
        };
    }

    /** Now and then a pause of up to 4 s: the whole process (its lease rounds and acknowledgements too) or its thread. */
    private void maybePause(Owner owner, Step step) {
        if (owner.pauseAt == step) {
            owner.pauseAt = null;
        } else if (random.nextInt(300) != 0) {
            return;
        }
        long pause = (long) (random.nextDouble() * 4 * SECOND);
        if (random.nextBoolean()) {
            owner.frozenUntil = Math.max(owner.frozenUntil, world.now() + pause);
        }
        owner.thread.park(pause);
        owner.check();
    }

    /** Runs an owner's callback when its process can: not while it is frozen, never once it crashed. */
    private void deliver(Owner owner, long at, Runnable action) {
        world.at(at, () -> {
            if (owner.crashed) {
                return;
            }
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

    /** An owner's lease reader, as in {@code TwoOwnersModelTest}: one round at a time, at most every 200 ms. */
    private void round(Owner owner) {
        if (owner.crashed) {
            return;
        }
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
            int end = changelog.size();
            deliver(owner, world.now() + (long) (random.nextDouble() * 5 * MS), () -> {
                if (owner.lease == lease) {
                    for (int offset = owner.readUpTo; offset < end; offset++) {
                        Written record = changelog.get(offset);
                        LeaseRounds.observe(lease, offset, CODEC.read(record.keyBytes(), record.value()),
                                CODEC.covered(record.keyBytes(), record.value()), CODEC.counter(record.keyBytes(), record.value()),
                                CODEC.writer(record.keyBytes(), record.value()));
                    }
                    owner.readUpTo = Math.max(owner.readUpTo, end);
                    LeaseRounds.confirmed(lease, send, owner.thread.nanoTime(), end);
                }
                world.at(Math.max(world.now(), sentAt + 200 * MS), () -> round(owner));
            });
        });
    }
}
