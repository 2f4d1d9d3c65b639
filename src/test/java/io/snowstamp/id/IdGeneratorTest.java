package io.snowstamp.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;

class IdGeneratorTest {

    private static final IdLayout SNOWFLAKE = IdLayout.preset("snowflake");
    private static final IdLayout BUTTERFLY = IdLayout.preset("butterfly");
    /** Some instant well after the default epoch, on a whole second. */
    private static final long NOW = 1_750_000_000_000L;
    private static final int TEN_MILLION = 10_000_000;

    @Test
    void shouldIssueTenMillionStrictlyIncreasingIdsFromAFrozenClock() {
        TestClock clock = new TestClock(NOW);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 7, clock);

        long previous = -1;
        long notIncreasing = 0;
        for (int i = 0; i < TEN_MILLION; i++) {
            long id = generator.next();
            if (id <= previous) {
                notIncreasing++;
            }
            previous = id;
        }

        // strictly increasing, hence no ID was issued twice
        assertThat(notIncreasing).isZero();
        long unitsBorrowed = (TEN_MILLION - 1) / 4096; // 4096 IDs per 1 ms unit, the first unit is the clock's own
        assertThat(generator.borrowedUnits()).isEqualTo(unitsBorrowed).isEqualTo(2441);
        assertThat(generator.lastTime()).isEqualTo(SNOWFLAKE.unitsSinceEpoch(NOW) + unitsBorrowed);
        assertThat(generator.leadMillis()).isEqualTo(unitsBorrowed);
        // every call after the first borrow sees the frozen clock behind the logical time
        assertThat(generator.clockBehindEvents()).isEqualTo(TEN_MILLION - 4097);
        assertThat(clock.reads()).as("one clock read per ID, never a wait loop").isEqualTo(TEN_MILLION + 1L);
        assertThat(SNOWFLAKE.decode(generator.lastId())).satisfies(last -> {
            assertThat(last.worker()).isEqualTo(7);
            assertThat(last.sequence()).isEqualTo((TEN_MILLION - 1) % 4096);
        });
    }

    @Test
    void shouldKeepIncreasingWithoutWaitingWhenTheClockStepsBack() {
        TestClock clock = new TestClock(NOW);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 1, clock);
        long last = issue(generator, 100, -1);
        assertThat(generator.leadMillis()).isZero();

        for (long stepBack : new long[] {1, 1_000, 3_600_000}) {
            clock.set(NOW - stepBack);
            long readsBefore = clock.reads();
            last = issue(generator, 100, last);
            assertThat(clock.reads() - readsBefore).as("no waiting: one clock read per ID").isEqualTo(100);
            assertThat(generator.lastTime()).as("logical time stays put").isEqualTo(SNOWFLAKE.unitsSinceEpoch(NOW));
            assertThat(generator.leadMillis()).as("lead after stepping back %d ms", stepBack).isEqualTo(stepBack);
        }
        assertThat(generator.clockBehindEvents()).isEqualTo(300);
        assertThat(generator.borrowedUnits()).isZero();

        // the clock catches up: IDs follow it again and the lead is gone
        clock.set(NOW + 1);
        last = issue(generator, 1, last);
        assertThat(generator.leadMillis()).isZero();
        assertThat(SNOWFLAKE.decode(last).sequence()).isZero();
        assertThat(generator.clockBehindEvents()).isEqualTo(300);
    }

    @Test
    void shouldReportLeadWithinOneUnitWhileFollowingACoarseClock() {
        IdLayout sonyflake = IdLayout.preset("sonyflake");
        TestClock clock = new TestClock(NOW + 7); // 7 ms into a 10 ms unit
        IdGenerator generator = new IdGenerator(sonyflake, 0, 1, clock);
        generator.next();
        assertThat(generator.leadMillis()).isEqualTo(-7);
        assertThat(new IdGenerator(sonyflake, 0, 1, clock).leadMillis()).as("nothing issued yet").isZero();
    }

    @Test
    void shouldBorrowUnitsAndWrapTheSequenceInTenMillionIdBursts() {
        TestClock clock = new TestClock(NOW);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 1023, clock);
        long last = -1;
        for (int burst = 0; burst < 2; burst++) {
            long firstTime = SNOWFLAKE.unitsSinceEpoch(clock.millis());
            long borrowedBefore = generator.borrowedUnits();
            for (int i = 0; i < TEN_MILLION; i++) {
                long id = generator.next();
                if (id <= last) {
                    fail("burst %d: id %d at %d is not above %d", burst, id, i, last);
                }
                last = id;
                if (i % 997 == 0 || i % 4096 == 4095 || i % 4096 == 0) {
                    DecodedId decoded = SNOWFLAKE.decode(id);
                    if (decoded.worker() != 1023 || decoded.datacenter() != 0
                            || decoded.sequence() != i % 4096 || decoded.time() != firstTime + i / 4096) {
                        fail("burst %d, id #%d: %s", burst, i, decoded);
                    }
                }
            }
            assertThat(generator.borrowedUnits() - borrowedBefore).isEqualTo((TEN_MILLION - 1) / 4096);
            // the next burst starts once the wall clock has passed the borrowed time
            clock.set(SNOWFLAKE.toWallMillis(generator.lastTime()) + 5);
        }
        assertThat(generator.borrowedUnits()).isEqualTo(2 * ((TEN_MILLION - 1) / 4096));
    }

    @Test
    void shouldWrapTheSequenceWithTheWorkerInTheLowBits() {
        TestClock clock = new TestClock(NOW);
        IdGenerator generator = new IdGenerator(BUTTERFLY, 0, 8191, clock);
        long time = BUTTERFLY.unitsSinceEpoch(NOW);
        long first = generator.next();
        assertThat(first).isEqualTo(BUTTERFLY.encode(time, 0, 8191, 0));
        long last = issue(generator, 511, first);
        assertThat(last).isEqualTo(BUTTERFLY.encode(time, 0, 8191, 511));
        long wrapped = generator.next();
        assertThat(BUTTERFLY.decode(wrapped)).isEqualTo(
                new DecodedId(wrapped, BUTTERFLY.unitsSinceEpoch(NOW) + 1, 0, 8191, 0, NOW + 1));
        assertThat(wrapped).isGreaterThan(last);
        assertThat(generator.borrowedUnits()).isEqualTo(1);
        assertThat(generator.leadMillis()).isEqualTo(1);
    }

    @Test
    void shouldTreatAClockBeforeTheEpochAsTimeZero() {
        TestClock clock = new TestClock(IdLayout.DEFAULT_EPOCH_MILLIS - 10_000);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 3, clock);
        assertThat(SNOWFLAKE.decode(generator.next())).isEqualTo(new DecodedId(3L << 12, 0, 0, 3, 0, IdLayout.DEFAULT_EPOCH_MILLIS));
        clock.set(Long.MIN_VALUE);
        assertThat(SNOWFLAKE.decode(generator.next()).time()).isZero();
        assertThat(generator.leadMillis()).as("signed lead, saturating not wrapping").isPositive();
    }

    @Test
    void shouldRejectDatacenterAndWorkerIdsThatDoNotFitTheLayout() {
        TestClock clock = new TestClock(NOW);
        assertThatThrownBy(() -> new IdGenerator(SNOWFLAKE, 1, 0, clock)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("id.datacenter-id=1 is out of range: accepted 0..0 (id.datacenter-bits=0)");
        assertThatThrownBy(() -> new IdGenerator(SNOWFLAKE, 0, 1024, clock)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("worker id 1024 is out of range: accepted 0..1023 (id.worker-bits=10; worker id = id.worker-offset + partition)");
        assertThatThrownBy(() -> new IdGenerator(SNOWFLAKE, 0, -1, clock)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("worker id -1 is out of range");
        assertThatThrownBy(() -> new IdGenerator(null, 0, 0, clock)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new IdGenerator(SNOWFLAKE, 0, 0, null)).isInstanceOf(NullPointerException.class);
        IdGenerator generator = new IdGenerator(SNOWFLAKE.withWorkerBits(5).withDatacenterBits(5), 31, 30, clock);
        assertThat(generator.datacenterId()).isEqualTo(31);
        assertThat(generator.workerId()).isEqualTo(30);
        assertThat(generator.lastId()).isEqualTo(-1);
        assertThat(generator.lastTime()).isEqualTo(-1);
    }

    @Test
    void shouldThrowWhenTheTimeFieldWouldOverflow() {
        IdLayout tiny = new IdLayout(4, 0, 2, 2, 0, 1, false); // times 0..15, 4 IDs per unit
        TestClock clock = new TestClock(15);
        IdGenerator generator = new IdGenerator(tiny, 0, 2, clock);
        long last = issue(generator, 4, -1);
        assertThat(tiny.decode(last)).isEqualTo(new DecodedId(last, 15, 0, 2, 3, 15));

        IdSpaceExhaustedException borrowing = catchThrowableOfType(IdSpaceExhaustedException.class, generator::next);
        assertThat(borrowing).hasMessage("ID space exhausted: time 16 is above the largest time 15 of layout "
                + "t4.d0.w2.s2.u1ms.e0.mid (time=4 bits of 1 ms since 1970-01-01T00:00:00Z, datacenter=0, worker=2, "
                + "sequence=2, worker in middle bits; last usable instant 1970-01-01T00:00:00.015Z)");
        assertThat(borrowing.time()).isEqualTo(16);
        assertThat(borrowing.layout()).isEqualTo(tiny);
        assertThat(generator.lastId()).as("unchanged by the failed call").isEqualTo(last);

        clock.set(100);
        assertThat(catchThrowableOfType(IdSpaceExhaustedException.class, generator::next).time()).isEqualTo(100);
        assertThat(generator.lastId()).isEqualTo(last);

        IdGenerator late = new IdGenerator(tiny, 0, 0, clock);
        assertThatThrownBy(late::next).isInstanceOf(IdSpaceExhaustedException.class).isInstanceOf(IllegalStateException.class);
        assertThat(late.lastId()).isEqualTo(-1);
    }

    @Test
    void shouldResumeFromItsOwnId() {
        TestClock clock = new TestClock(NOW);
        IdGenerator before = new IdGenerator(SNOWFLAKE, 0, 5, clock);
        long last = issue(before, 10_000, -1); // two borrowed units

        IdGenerator after = new IdGenerator(SNOWFLAKE, 0, 5, clock);
        after.resumeAbove(last);
        assertThat(after.lastId()).isEqualTo(last);
        assertThat(after.lastTime()).isEqualTo(before.lastTime());
        assertThat(after.leadMillis()).isEqualTo(2);
        long next = after.next();
        assertThat(next).isGreaterThan(last);
        DecodedId resumed = SNOWFLAKE.decode(last);
        assertThat(SNOWFLAKE.decode(next)).isEqualTo(new DecodedId(next, resumed.time(), 0, 5, resumed.sequence() + 1,
                resumed.wallMillis()));
    }

    @Test
    void shouldMoveToTheNextTimeUnitAfterAForeignId() {
        TestClock clock = new TestClock(NOW);
        long time = SNOWFLAKE.unitsSinceEpoch(NOW);
        long foreign = SNOWFLAKE.encode(time, 0, 9, 17);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 5, clock);
        generator.resumeAbove(foreign);
        assertThat(generator.lastId()).isEqualTo(foreign);
        long next = generator.next();
        assertThat(next).isGreaterThan(foreign).isEqualTo(SNOWFLAKE.encode(time + 1, 0, 5, 0));

        // any non-negative number that is not one of ours counts the same way
        IdGenerator other = new IdGenerator(SNOWFLAKE, 0, 5, clock);
        other.resumeAbove(Long.MAX_VALUE >>> 1);
        assertThat(other.next()).isGreaterThan(Long.MAX_VALUE >>> 1);
    }

    @Test
    void shouldIgnoreResumePointsBelowWhatItAlreadyIssued() {
        TestClock clock = new TestClock(NOW);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 5, clock);
        long first = generator.next();
        long last = issue(generator, 10, first);
        long lastTime = generator.lastTime();

        generator.resumeAbove(first);
        generator.resumeAbove(SNOWFLAKE.encode(lastTime, 0, 4, 4095)); // smaller: worker 4 sorts below worker 5
        generator.resumeAbove(-1);
        generator.resumeAbove(Long.MIN_VALUE);
        assertThat(generator.lastId()).isEqualTo(last);
        assertThat(generator.next()).isEqualTo(SNOWFLAKE.encode(lastTime, 0, 5, 11));
    }

    @Test
    void shouldRunAheadAfterResumingAboveAnIdInTheFuture() {
        TestClock clock = new TestClock(NOW);
        IdGenerator generator = new IdGenerator(SNOWFLAKE, 0, 5, clock);
        generator.next();
        long inAnHour = SNOWFLAKE.encode(SNOWFLAKE.unitsSinceEpoch(NOW + 3_600_000), 0, 5, 42);
        generator.resumeAbove(inAnHour);
        assertThat(generator.leadMillis()).isEqualTo(3_600_000);
        assertThat(generator.next()).isEqualTo(inAnHour + 1);
        clock.advance(3_600_001);
        assertThat(SNOWFLAKE.decode(generator.next()).sequence()).isZero();
        assertThat(generator.leadMillis()).isZero();
    }

    @Test
    void shouldResumeWithTheWorkerInTheLowBits() {
        TestClock clock = new TestClock(NOW);
        long time = BUTTERFLY.unitsSinceEpoch(NOW);

        IdGenerator own = new IdGenerator(BUTTERFLY, 0, 100, clock);
        own.resumeAbove(BUTTERFLY.encode(time, 0, 100, 300));
        assertThat(own.next()).isEqualTo(BUTTERFLY.encode(time, 0, 100, 301));

        // a foreign ID with a higher worker and the same sequence: numerically above ours at (time, 300)
        IdGenerator foreign = new IdGenerator(BUTTERFLY, 0, 100, clock);
        long other = BUTTERFLY.encode(time, 0, 8000, 300);
        foreign.resumeAbove(other);
        long next = foreign.next();
        assertThat(next).isGreaterThan(other).isEqualTo(BUTTERFLY.encode(time + 1, 0, 100, 0));

        // after a foreign resume, an own ID that is numerically larger but sits at an earlier
        // (time, sequence) must not pull the generator back below the foreign one
        IdGenerator mixed = new IdGenerator(BUTTERFLY, 0, 100, clock);
        long foreignFirst = BUTTERFLY.encode(time, 0, 50, 400);
        long ownLater = BUTTERFLY.encode(time, 0, 100, 400);
        mixed.resumeAbove(foreignFirst);
        mixed.resumeAbove(ownLater);
        assertThat(mixed.lastId()).isEqualTo(ownLater);
        assertThat(mixed.next()).isGreaterThan(ownLater).isGreaterThan(foreignFirst)
                .isEqualTo(BUTTERFLY.encode(time + 1, 0, 100, 0));
    }

    @Test
    void shouldRefuseAResumePointWithNoIdAboveIt() {
        TestClock clock = new TestClock(NOW);
        IdLayout jsSafe = IdLayout.preset("js-safe");
        IdGenerator generator = new IdGenerator(jsSafe, 0, 1, clock);
        assertThatThrownBy(() -> generator.resumeAbove(1L << 53)).isInstanceOf(IdSpaceExhaustedException.class);
        assertThatThrownBy(() -> generator.resumeAbove(jsSafe.encode(jsSafe.maxTime(), 0, 1, jsSafe.maxSequence())))
                .isInstanceOf(IdSpaceExhaustedException.class);
        assertThat(generator.lastId()).as("unchanged").isEqualTo(-1);

        long lastRoom = jsSafe.encode(jsSafe.maxTime(), 0, 1, jsSafe.maxSequence() - 1);
        generator.resumeAbove(lastRoom);
        assertThat(generator.next()).isEqualTo(lastRoom + 1).isLessThan(1L << 53);
        assertThatThrownBy(generator::next).isInstanceOf(IdSpaceExhaustedException.class);
    }

    /** Issues {@code count} IDs, failing unless each is above the one before; returns the last. */
    private static long issue(IdGenerator generator, int count, long previous) {
        for (int i = 0; i < count; i++) {
            long id = generator.next();
            if (id <= previous) {
                fail("id %d (#%d) is not above %d", id, i, previous);
            }
            previous = id;
        }
        return previous;
    }
}
