package io.snowstamp.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random layouts driven by random clocks (forward and backward jumps, freezes). Reproduce a failure
 * with {@code -Dsnowstamp.test.seed=<seed from the message>}.
 */
class IdGeneratorPropertyTest {

    private static final long SEED = Long.getLong("snowstamp.test.seed", 0x5EED_0F_1DL);
    private static final int LAYOUTS = 300;
    private static final int STEPS_PER_LAYOUT = 4_000;

    private long issued;
    private long exhausted;
    private long resumes;

    @Test
    void shouldStayIncreasingDecodableAndCollisionFreeOnRandomLayoutsAndClocks() {
        Random seeds = new Random(SEED);
        for (int n = 0; n < LAYOUTS; n++) {
            runCase(seeds.nextLong());
        }
        System.out.printf("property test: seed=%d layouts=%d ids=%d exhausted=%d resumes=%d%n",
                SEED, LAYOUTS, issued, exhausted, resumes);
        // guards against a generator of cases that exhausts everything at once and checks nothing
        assertThat(issued).as("seed=%d", SEED).isGreaterThan(LAYOUTS * STEPS_PER_LAYOUT / 2L);
        assertThat(exhausted).as("seed=%d: some narrow layouts reach their end", SEED).isPositive();
        assertThat(resumes).as("seed=%d", SEED).isPositive();
    }

    /** One random layout, two generators on distinct nodes where the layout has room for two, one random clock. */
    private void runCase(long caseSeed) {
        Random random = new Random(caseSeed);
        IdLayout layout = IdLayoutTest.randomLayout(random);
        String where = "seed=" + caseSeed + " layout=" + layout.fingerprint();
        TestClock clock = new TestClock(randomStart(random, layout));

        long nodes = (layout.maxDatacenter() + 1) * (layout.maxWorker() + 1); // at most 2^22 here
        Node a = new Node(layout, random, clock, -1);
        Node b = nodes >= 2 ? new Node(layout, random, clock, a.nodeNumber) : null;

        for (int step = 0; step < STEPS_PER_LAYOUT; step++) {
            stepClock(random, clock, layout);
            Node node = b == null || random.nextBoolean() ? a : b;
            if (node.done) {
                continue;
            }
            if (random.nextInt(100) == 0) {
                resumeRandomly(random, layout, node, b == null ? null : node == a ? b : a, where, step);
            } else {
                issueOne(layout, node, clock, where, step);
            }
        }

        long[] all = b == null ? a.ids() : concat(a.ids(), b.ids());
        Arrays.sort(all);
        for (int i = 1; i < all.length; i++) {
            if (all[i] == all[i - 1]) {
                fail("%s: id %d issued twice", where, all[i]);
            }
        }
    }

    private void issueOne(IdLayout layout, Node node, TestClock clock, String where, int step) {
        IdGenerator generator = node.generator;
        long before = generator.lastId();
        long id;
        try {
            id = generator.next();
        } catch (IdSpaceExhaustedException e) {
            // legitimate only when the clock, or the logical time with a full sequence, is at the end of the layout
            long clockUnits = Math.max(0, layout.unitsSinceEpoch(clock.millis()));
            boolean legitimate;
            if (clockUnits > generator.lastTime()) {
                legitimate = clockUnits > layout.maxTime() && e.time() == clockUnits;
            } else {
                boolean sequenceFull = node.floor != node.lastOwn // resumed above a foreign ID: sequence set to max
                        || layout.decode(node.lastOwn).sequence() == layout.maxSequence();
                legitimate = generator.lastTime() == layout.maxTime() && e.time() == layout.maxTime() + 1 && sequenceFull;
            }
            if (!legitimate || generator.lastId() != before) {
                fail("%s step %d: unexpected %s (clock units %d, last id %d)", where, step, e, clockUnits, before);
            }
            exhausted++;
            node.done = true;
            return;
        }
        if (id <= node.floor) {
            fail("%s step %d: id %d is not above %d", where, step, id, node.floor);
        }
        DecodedId decoded = layout.decode(id);
        if (decoded.worker() != node.worker || decoded.datacenter() != node.datacenter) {
            fail("%s step %d: %s decodes to another node than datacenter %d worker %d",
                    where, step, decoded, node.datacenter, node.worker);
        }
        if (layout.encode(decoded.time(), decoded.datacenter(), decoded.worker(), decoded.sequence()) != id) {
            fail("%s step %d: encode(decode(%d)) differs", where, step, id);
        }
        long clockUnits = Math.max(0, layout.unitsSinceEpoch(clock.millis()));
        if (decoded.time() < clockUnits || generator.leadMillis() <= -layout.unitMillis()) {
            fail("%s step %d: %s is behind the clock at %d units", where, step, decoded, clockUnits);
        }
        if (generator.lastId() != id) {
            fail("%s step %d: lastId %d, issued %d", where, step, generator.lastId(), id);
        }
        node.floor = id;
        node.lastOwn = id;
        node.add(id);
        issued++;
    }

    /** Resumes above the other node's last ID, an older own ID, or some ID near the clock. */
    private void resumeRandomly(Random random, IdLayout layout, Node node, Node other, String where, int step) {
        long target;
        switch (random.nextInt(3)) {
            case 0:
                target = other == null ? node.generator.lastId() : other.generator.lastId();
                break;
            case 1:
                target = node.generator.lastId() - random.nextInt(1_000);
                break;
            default:
                long time = Math.min(layout.maxTime(), Math.max(0, node.generator.lastTime()) + random.nextInt(50));
                target = layout.encode(time, random.nextLong() & layout.maxDatacenter(),
                        random.nextLong() & layout.maxWorker(), random.nextLong() & layout.maxSequence());
        }
        try {
            node.generator.resumeAbove(target);
        } catch (IdSpaceExhaustedException e) {
            if (layout.decode(target).time() < layout.maxTime()) {
                fail("%s step %d: resumeAbove(%d) claims exhaustion: %s", where, step, target, e);
            }
            exhausted++;
            node.done = true;
            return;
        }
        node.floor = Math.max(node.floor, target);
        if (node.generator.lastId() != node.floor) {
            fail("%s step %d: after resumeAbove(%d) lastId is %d, expected %d",
                    where, step, target, node.generator.lastId(), node.floor);
        }
        resumes++;
    }

    private static long randomStart(Random random, IdLayout layout) {
        if (random.nextInt(10) == 0) {
            return layout.epochMillis() - random.nextInt(100_000); // before the epoch: time 0
        }
        long units = (random.nextLong() >>> 1) % (layout.maxTime() / 2 + 1);
        return layout.toWallMillis(units) + random.nextInt((int) layout.unitMillis());
    }

    /** Freezes, small and large jumps both ways; the clock is a wall clock, not a logical one. */
    private static void stepClock(Random random, TestClock clock, IdLayout layout) {
        int unit = (int) layout.unitMillis();
        int roll = random.nextInt(100);
        if (roll < 50) {
            return;
        } else if (roll < 75) {
            clock.advance(random.nextInt(2 * unit + 1));
        } else if (roll < 88) {
            clock.advance(-random.nextInt(3 * unit + 1));
        } else if (roll < 96) {
            clock.advance(random.nextInt(200 * unit + 1));
        } else {
            clock.advance(-random.nextInt(100_000));
        }
    }

    static Stream<String> presets() {
        return IdLayout.presetNames().stream();
    }

    /** In the spirit of tsid-creator's CollisionTest: many generators, one clock, count collisions. */
    @ParameterizedTest
    @MethodSource("presets")
    void shouldNeverCollideAcrossWorkersSharingAClock(String preset) {
        IdLayout layout = IdLayout.preset(preset);
        Random random = new Random(SEED);
        TestClock clock = new TestClock(1_750_000_000_000L);
        long[] workers = {0, 1, layout.maxWorker() - 1, layout.maxWorker()};
        IdGenerator[] generators = new IdGenerator[workers.length];
        for (int g = 0; g < workers.length; g++) {
            generators[g] = new IdGenerator(layout, 0, workers[g], clock);
        }
        int perGenerator = 250_000;
        long[] ids = new long[perGenerator * workers.length];
        for (int i = 0; i < perGenerator; i++) {
            stepClock(random, clock, layout);
            for (int g = 0; g < generators.length; g++) {
                ids[i * generators.length + g] = generators[g].next();
            }
        }
        Arrays.sort(ids);
        int collisions = 0;
        for (int i = 1; i < ids.length; i++) {
            if (ids[i] == ids[i - 1]) {
                collisions++;
            }
        }
        assertThat(collisions).as("seed=%d preset=%s", SEED, preset).isZero();
        for (int g = 0; g < generators.length; g++) {
            assertThat(layout.decode(generators[g].lastId()).worker()).isEqualTo(workers[g]);
        }
    }

    private static long[] concat(long[] a, long[] b) {
        long[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    /** One generator under test and what the test knows about it. */
    private static final class Node {
        final IdGenerator generator;
        final long datacenter;
        final long worker;
        final long nodeNumber;
        /** Every later ID must be above this: the last issued or resumed-above ID. */
        long floor = -1;
        long lastOwn = 0;
        boolean done;
        private long[] ids = new long[256];
        private int size;

        /** A generator on a random node other than {@code notNode} (-1: any). */
        Node(IdLayout layout, Random random, TestClock clock, long notNode) {
            long nodes = (layout.maxDatacenter() + 1) * (layout.maxWorker() + 1);
            long number;
            do {
                number = (random.nextLong() >>> 1) % nodes;
            } while (number == notNode);
            this.nodeNumber = number;
            this.datacenter = number / (layout.maxWorker() + 1);
            this.worker = number % (layout.maxWorker() + 1);
            this.generator = new IdGenerator(layout, datacenter, worker, clock);
        }

        void add(long id) {
            if (size == ids.length) {
                ids = Arrays.copyOf(ids, size * 2);
            }
            ids[size++] = id;
        }

        long[] ids() {
            return Arrays.copyOf(ids, size);
        }
    }
}
