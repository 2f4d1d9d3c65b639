package io.snowstamp.lease;

import io.snowstamp.testing.AnsweringTicker;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class LeaseGuardTest {
    private static final long TERM = TimeUnit.MILLISECONDS.toNanos(200);
    private static final LeaseMark MINE = new LeaseMark(2, "a/t1");
    private static final TaskId TASK = new TaskId(0, 3);
    /** The documents' bound on a wait for a confirmation (design.md, operations.md), not the code's constant. */
    private static final long TWENTY_SECONDS = TimeUnit.SECONDS.toNanos(20);

    private static PartitionLease lease() {
        return new PartitionLease(3, MINE, 10, TERM, TERM);
    }

    @Test
    void shouldWaitForTheTakeoverThenIssueAndSayItWasTheFirstIdOnce() throws Exception {
        PartitionLease lease = lease();
        lease.observe(10, MINE);
        long start = System.nanoTime();
        lease.confirmed(start, start, Long.MAX_VALUE);
        LeaseGuard guard = new LeaseGuard(lease, TASK, "partition 3", null);
        Thread verifier = new Thread(() -> {
            // confirmations every 20 ms, as the verifier would send them
            for (int i = 0; i < 30; i++) {
                sleep(20);
                long now = System.nanoTime();
                lease.confirmed(now, now, Long.MAX_VALUE);
            }
        });
        verifier.start();
        assertThat(guard.check()).as("the first ID under the lease").isTrue();
        assertThat(System.nanoTime() - start).as("waited out the term").isGreaterThanOrEqualTo(TERM);
        assertThat(guard.check()).isFalse();
        verifier.join();
    }

    @Test
    void shouldRefuseTheIdOnceANewerLeaseShows() {
        PartitionLease lease = lease();
        lease.observe(10, MINE);
        lease.confirmed(0, 0, Long.MAX_VALUE);
        lease.confirmed(TERM, TERM, Long.MAX_VALUE);
        LeaseGuard guard = new LeaseGuard(lease, TASK, "partition 3", null);
        lease.observe(11, new LeaseMark(3, "b/t1"));

        Throwable thrown = catchThrowable(guard::check);

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageContaining("lease lost to epoch 3 held by b/t1");
    }

    @Test
    void shouldRestoreAgainWhenThePreviousOwnerWroteAfterTheRestore() {
        PartitionLease lease = lease();
        lease.observe(10, new LeaseMark(1, "old/t1"));
        lease.observe(11, MINE);
        lease.confirmed(0, 0, Long.MAX_VALUE);
        lease.confirmed(TERM, TERM, Long.MAX_VALUE);
        LeaseGuard guard = new LeaseGuard(lease, TASK, "partition 3", null);

        Throwable thrown = catchThrowable(guard::check);

        assertThat(thrown).isInstanceOf(TaskCorruptedException.class);
        assertThat(((TaskCorruptedException) thrown).corruptedTasks()).containsExactly(TASK);
    }

    @Test
    void shouldGiveUpANewLeaseNeverConfirmedTwentySecondsAfterItWasTakenNotAfterItsFirstRecord() {
        PartitionLease lease = lease();     // its record never read back: no confirmation
        AtomicBoolean parked = new AtomicBoolean();
        long takenAt = System.nanoTime() - LeaseGuard.MAX_WAIT_NANOS;   // its input was held back all that time
        LeaseGuard guard = new LeaseGuard(lease, TASK, "partition 3", null, () -> parked.set(true), takenAt, Ticker.SYSTEM);

        Throwable thrown = catchThrowable(guard::check);

        assertThat(thrown).isInstanceOf(TaskMigratedException.class).hasMessageContaining("not confirmed by the changelog in time");
        assertThat(parked).as("a record reached the task during its takeover").isTrue();
    }

    /**
     * design.md: after 20 s without a confirmation a task gives its partition back. The path that runs: the record is set
     * aside while {@link LeaseGuard#mustWait} says so, and that wait counts from when the input started waiting.
     */
    @Test
    void shouldGiveUpASetAsideWaitForAConfirmationTwentySecondsAfterItStartedNotBefore() {
        AnsweringTicker ticker = new AnsweringTicker();
        PartitionLease lease = lease();
        lease.observe(10, MINE);
        lease.confirmed(0, 0, Long.MAX_VALUE);
        lease.confirmed(TERM, TERM, Long.MAX_VALUE);
        LeaseGuard guard = LeaseGuard.of(lease, TASK, "partition 3", ticker);
        ticker.park(TERM);
        assertThat(guard.check()).as("issuing").isTrue();
        ticker.park(TERM);                                  // the term ran out; no confirmation comes from here on
        long waitingSince = ticker.nanoTime();

        assertThat(guard.mustWait(waitingSince)).isTrue();
        ticker.park(TWENTY_SECONDS - 1);
        assertThat(guard.mustWait(waitingSince)).as("a nanosecond under 20 s: still set aside").isTrue();
        ticker.park(1);
        Throwable thrown = catchThrowable(() -> guard.mustWait(waitingSince));

        assertThat(thrown).isInstanceOf(TaskMigratedException.class)
                .hasMessageStartingWith("partition 3: lease epoch 2 held by a/t1 not confirmed by the changelog in time");
    }

    /** A new lease's set-aside wait counts from when the lease was taken, not from its first record (as {@link LeaseGuard#check}). */
    @Test
    void shouldGiveUpASetAsideWaitOfANewLeaseNeverConfirmedTwentySecondsAfterItWasTaken() {
        AnsweringTicker ticker = new AnsweringTicker();
        LeaseGuard guard = LeaseGuard.of(lease(), TASK, "partition 3", ticker);     // its record never read back

        ticker.park(TWENTY_SECONDS - 1);
        assertThat(guard.mustWait(ticker.nanoTime())).as("a nanosecond under 20 s after the take").isTrue();
        ticker.park(1);
        Throwable thrown = catchThrowable(() -> guard.mustWait(ticker.nanoTime()));

        assertThat(thrown).as("its input only started waiting now").isInstanceOf(TaskMigratedException.class)
                .hasMessageStartingWith("partition 3: lease epoch 2 held by a/t1 not confirmed by the changelog in time");
    }

    @Test
    void shouldPassEveryCheckWithoutALeaseAndReleaseOnClose() {
        LeaseGuard unchecked = LeaseGuard.unchecked();
        assertThat(unchecked.check()).isFalse();
        AtomicBoolean released = new AtomicBoolean();
        new LeaseGuard(lease(), TASK, "partition 3", () -> released.set(true)).release();
        assertThat(released).isTrue();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
