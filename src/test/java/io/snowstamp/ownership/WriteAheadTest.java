package io.snowstamp.ownership;

import io.snowstamp.id.IdLayout;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.testing.AnsweringTicker;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class WriteAheadTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final long T = 1_000_000;
    /** Where the task's reservations land in the changelog (after its lease record). */
    private static final long FIRST_OFFSET = 40;

    private final AnsweringTicker ticker = new AnsweringTicker();
    private final List<Long> written = new ArrayList<>();
    private final List<Long> waits = new ArrayList<>();
    private boolean mayWrite = true;
    private long ackAfterNanos = 2_000_000;

    private WriteAhead ahead(long windowUnits, int partition) {
        return ahead(windowUnits, partition, LeaseGuard.unchecked(ticker));
    }

    private WriteAhead ahead(long windowUnits, int partition, LeaseGuard lease) {
        WriteAhead[] box = new WriteAhead[1];
        WriteAhead ahead = new WriteAhead(LAYOUT, 0, 3, windowUnits, partition, lease, until -> {
            if (!mayWrite) {
                return false;
            }
            written.add(until);
            long offset = FIRST_OFFSET + written.size() - 1;
            ticker.answer(ackAfterNanos, () -> box[0].acknowledged(until, offset));
            return true;
        }, "partition " + partition, waits::add);
        box[0] = ahead;
        return ahead;
    }

    private static long until(long time) {
        return LAYOUT.encode(time, 0, 3, LAYOUT.maxSequence());
    }

    @Test
    void shouldLetNoIdPassBeforeItsReservationIsAcknowledged() {
        WriteAhead ahead = ahead(1_000, 0);
        long id = LAYOUT.encode(T, 0, 3, 0);

        long waited = ahead.awaitCovered(id, T);

        assertThat(written).containsExactly(until(T + 1_000));
        assertThat(ahead.acked()).isEqualTo(until(T + 1_000));
        assertThat(waited).as("until the acknowledgement, 2 ms after the write").isBetween(2_000_000L, 7_000_000L);
        assertThat(waits).containsExactly(waited);
    }

    @Test
    void shouldPassAtOnceBelowWhatIsAcknowledgedAndRenewWhenHalfIsUsed() {
        WriteAhead ahead = ahead(1_000, 0);
        ahead.renew(T);
        ticker.park(3_000_000);
        assertThat(ahead.acked()).isEqualTo(until(T + 1_000));

        assertThat(ahead.awaitCovered(LAYOUT.encode(T + 400, 0, 3, 0), T + 400)).isZero();
        ahead.renew(T + 400);
        assertThat(written).as("more than half a window left: nothing sent").containsExactly(until(T + 1_000));
        ahead.renew(T + 500);
        assertThat(written).as("half used: the next one goes out").containsExactly(until(T + 1_000), until(T + 1_500));
        ahead.renew(T + 501);
        assertThat(written).as("one in flight reaches far enough").hasSize(2);
        assertThat(waits).isEmpty();
    }

    @Test
    void shouldSpreadTheWindowByPartitionSoThatTasksStartedTogetherRenewApart() {
        ahead(1_000, 8).renew(T);
        ahead(1_000, 17).renew(T);

        assertThat(written).containsExactly(until(T + 1_500), until(T + 1_062));
    }

    @Test
    void shouldReserveEachIdItselfWithAWindowOfZero() {
        WriteAhead ahead = ahead(0, 0);
        long first = LAYOUT.encode(T, 0, 3, 0);
        long second = LAYOUT.encode(T, 0, 3, 1);

        ahead.renew(T);
        assertThat(written).as("nothing ahead").isEmpty();
        ahead.awaitCovered(first, T);
        ahead.awaitCovered(second, T);

        assertThat(written).containsExactly(first, second);
        assertThat(waits).hasSize(2);
    }

    @Test
    void shouldTellWhenAnIdStartsToWaitOnTheThreadSoThatTheOldestWaitGaugeMovesWhileItLasts() {
        List<String> told = new ArrayList<>();
        WriteAhead[] box = new WriteAhead[1];
        box[0] = new WriteAhead(LAYOUT, 0, 3, 0, 0, LeaseGuard.unchecked(ticker), until -> {
            ticker.answer(ackAfterNanos, () -> box[0].acknowledged(until, FIRST_OFFSET));
            return true;
        }, "partition 0", () -> told.add("started"), nanos -> told.add("ended after " + nanos / 1_000_000 + " ms"));

        box[0].awaitCovered(LAYOUT.encode(T, 0, 3, 0), T);     // id.reservation=0: the ID waits for its own reservation

        assertThat(told).as("started before the wait, ended after it").hasSize(2).first().isEqualTo("started");
        assertThat(told.get(1)).startsWith("ended after ");
        box[0].awaitCovered(LAYOUT.encode(T, 0, 3, 0), T);
        assertThat(told).as("covered already: no wait").hasSize(2);
    }

    @Test
    void shouldDropTheIdWhenTheTaskMayNotWrite() {
        WriteAhead ahead = ahead(1_000, 0);
        mayWrite = false;

        Throwable thrown = catchThrowable(() -> ahead.awaitCovered(LAYOUT.encode(T, 0, 3, 0), T));

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageContaining("the lease lapsed");
        assertThat(written).isEmpty();
    }

    @Test
    void shouldGiveUpWhenNoAcknowledgementComesInTime() {
        WriteAhead ahead = ahead(1_000, 0);
        ackAfterNanos = AckWait.MAX_WAIT_NANOS * 2;

        Throwable thrown = catchThrowable(() -> ahead.awaitCovered(LAYOUT.encode(T, 0, 3, 0), T));

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageContaining("not acknowledged in time");
        assertThat(ticker.nanoTime()).isBetween(AckWait.MAX_WAIT_NANOS, AckWait.MAX_WAIT_NANOS + 10_000_000);
    }

    /**
     * design.md: a reservation not acknowledged and read back within 20 s gives the partition back. The path that runs:
     * the record is set aside while {@link WriteAhead#mustWait} says so, and that wait counts from when the input started
     * waiting.
     */
    @Test
    void shouldGiveUpASetAsideWaitForItsReservationTwentySecondsAfterItStartedNotBefore() {
        WriteAhead ahead = ahead(1_000, 0);
        ackAfterNanos = Long.MAX_VALUE / 4;                     // never acknowledged
        long waitingSince = ticker.nanoTime();

        assertThat(ahead.mustWait(T, waitingSince)).as("sends the reservation, does not wait for it").isTrue();
        ticker.park(java.util.concurrent.TimeUnit.SECONDS.toNanos(20) - 1);
        assertThat(ahead.mustWait(T, waitingSince)).as("a nanosecond under 20 s: still set aside").isTrue();
        ticker.park(1);
        Throwable thrown = catchThrowable(() -> ahead.mustWait(T, waitingSince));

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageStartingWith("partition 0: reservation not acknowledged in time");
        assertThat(written).as("sent once").containsExactly(until(T + 1_000));
    }

    @Test
    void shouldKeepTheHighestAcknowledgementWhateverOrderTheyCome() {
        WriteAhead ahead = ahead(1_000, 0);
        ahead.acknowledged(until(T + 2_000), 41);
        ahead.acknowledged(until(T + 1_000), 42);

        assertThat(ahead.acked()).isEqualTo(until(T + 2_000));
    }

    /**
     * A replaced changelog leader that does not know it (cut off from the controller and its followers) answers the lease
     * rounds with its old end, below every record its successor acknowledged: a reservation the successor acknowledged
     * covers nothing until a round reads past it — which that leader's rounds never do, so the ID is dropped.
     */
    @Test
    void shouldLetNoIdPassBeforeARoundConfirmingTheLeaseReadPastItsReservation() {
        LeaseMark mine = new LeaseMark(4, "a#1/thread-1");
        PartitionLease lease = LeaseRounds.readBack(0, mine, 39);
        List<Long> hurried = new ArrayList<>();
        WriteAhead ahead = ahead(1_000, 0, LeaseGuard.of(lease, new TaskId(0, 0), "partition 0", ticker, () -> hurried.add(ticker.nanoTime())));
        long id = LAYOUT.encode(T, 0, 3, 0);
        // rounds every 200 ms that read up to offset 40 (the stale end): the reservation at offset 40 is not below it
        for (long at = 0; at < AckWait.MAX_WAIT_NANOS + 1_000_000_000L; at += 200_000_000L) {
            long send = at;
            ticker.answer(at, () -> LeaseRounds.confirmed(lease, send, send, FIRST_OFFSET));
        }

        Throwable thrown = catchThrowable(() -> ahead.awaitCovered(id, T));

        assertThat(thrown).as("acknowledged at offset 40, never read past").isInstanceOf(TaskMigratedException.class)
                .hasMessageContaining("not acknowledged in time");
        assertThat(hurried).as("the waiting ID asks the verifier for rounds").isNotEmpty();
        assertThat(ahead.acked()).isEqualTo(-1);
    }

    @Test
    void shouldLetTheIdPassOnceARoundReadsPastItsReservation() {
        LeaseMark mine = new LeaseMark(4, "a#1/thread-1");
        PartitionLease lease = LeaseRounds.readBack(0, mine, 39);
        WriteAhead ahead = ahead(1_000, 0, LeaseGuard.of(lease, new TaskId(0, 0), "partition 0", ticker, () -> { }));
        ticker.answer(5_000_000, () -> LeaseRounds.confirmed(lease, 5_000_000, 5_000_000, FIRST_OFFSET));
        ticker.answer(9_000_000, () -> LeaseRounds.confirmed(lease, 9_000_000, 9_000_000, FIRST_OFFSET + 1));

        long waited = ahead.awaitCovered(LAYOUT.encode(T, 0, 3, 0), T);

        assertThat(waited).as("acknowledged after 2 ms, read past by the round of 9 ms").isBetween(9_000_000L, 14_000_000L);
        assertThat(ahead.acked()).isEqualTo(until(T + 1_000));
    }

    /** A round that reads past a newer lease while an ID waits: nothing will be read past for this lease, the ID goes now. */
    @Test
    void shouldDropAWaitingIdAsSoonAsTheLeaseIsLost() {
        LeaseMark mine = new LeaseMark(4, "a#1/thread-1");
        PartitionLease lease = LeaseRounds.readBack(0, mine, 39);
        LeaseRounds.confirmed(lease, 0, 0, FIRST_OFFSET);
        WriteAhead ahead = ahead(1_000, 0, LeaseGuard.of(lease, new TaskId(0, 0), "partition 0", ticker));
        ticker.answer(50_000_000, () -> LeaseRounds.observe(lease, 41, new LeaseMark(5, "b#1/thread-1"), -1));

        Throwable thrown = catchThrowable(() -> ahead.awaitCovered(LAYOUT.encode(T, 0, 3, 0), T));

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageContaining("lapsed while an ID was being taken");
        assertThat(ticker.nanoTime()).as("dropped when the newer lease showed, not after the whole wait").isLessThan(60_000_000L);
    }
}
