package io.snowstamp.ownership;

import io.snowstamp.id.IdGenerator;
import io.snowstamp.id.IdLayout;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.LeaseRounds;
import io.snowstamp.lease.PartitionLease;
import io.snowstamp.lease.Ticker;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first ID under a new lease and what another writer's records prove: the lease's read of the changelog found a
 * reservation of the previous owner ({@link PartitionLease#highestCovered}) above this owner's clock. Where the state's
 * bounds decide a resume (at-least-once), the first ID is above it; where the committed output tail decides
 * (exactly-once with the tail guard: a fenced owner commits nothing), it is not, and IDs do not run ahead of the clock.
 */
class IssuerTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final long WORKER = 5;
    private static final long NOW = 1_800_000_000_000L;
    private static final LeaseMark PREVIOUS = new LeaseMark(1, "a#00000001/t1");
    private static final LeaseMark MINE = new LeaseMark(2, "b#00000002/t1");
    /** A reservation of the previous owner, 10 s ahead of this owner's clock. */
    private static final long PREVIOUS_RESERVED = LAYOUT.encode(LAYOUT.unitsSinceEpoch(NOW + 10_000), 0, WORKER, LAYOUT.maxSequence());

    @Test
    void shouldResumeAboveWhatAnotherWriterReservedWhereTheStateDecides() {
        assertThat(firstId(true)).isGreaterThan(PREVIOUS_RESERVED);
    }

    @Test
    void shouldResumeOnTheClockWhereTheOutputTailDecides() {
        assertThat(firstId(false)).isLessThan(PREVIOUS_RESERVED)
                .isGreaterThanOrEqualTo(LAYOUT.encode(LAYOUT.unitsSinceEpoch(NOW), 0, WORKER, 0));
    }

    @Test
    void shouldTellTheFirstIdsWaitForTheReservationAboveWhatAnotherWriterReservedSoThatIssuingDoesNotWait() {
        long[] nanos = {0};
        LeaseGuard guard = permittedLease(nanos);
        IdGenerator generator = new IdGenerator(LAYOUT, 0, WORKER, () -> NOW);
        java.util.List<Long> sent = new java.util.ArrayList<>();
        boolean[] issuing = {false};
        java.util.List<Long> sentWhileIssuing = new java.util.ArrayList<>();
        WriteAhead[] ahead = new WriteAhead[1];
        // a reservation is in the log when the test says (an acknowledgement and a round); one sent while issuing, at once
        ahead[0] = new WriteAhead(LAYOUT, 0, WORKER, 1_000, 0, guard, until -> {
            sent.add(until);
            if (issuing[0]) {
                sentWhileIssuing.add(until);
                ahead[0].inLog(until);
            }
            return true;
        }, "partition 0", waited -> { });
        Issuer issuer = new Issuer(guard, generator, ahead[0], Issuer.Steps.NONE, true);

        // the task sets its records aside while the next ID would wait, and acknowledges what was sent meanwhile
        for (int round = 0; round < 5 && issuer.mustWait(-1) != Issuer.Wait.NONE; round++) {
            sent.forEach(ahead[0]::inLog);
        }
        assertThat(issuer.mustWait(-1)).isEqualTo(Issuer.Wait.NONE);
        issuing[0] = true;
        long id = issuer.issue();

        assertThat(id).isGreaterThan(PREVIOUS_RESERVED);
        assertThat(sentWhileIssuing).as("the first ID, above the previous owner's reservation, needed no new reservation:"
                + " its wait was the task's, not its thread's").isEmpty();
    }

    /** A new lease whose own record was read back past the previous owner's reservation, its takeover wait over. */
    private static LeaseGuard permittedLease(long[] nanos) {
        Ticker ticker = new Ticker() {
            @Override
            public long nanoTime() {
                return nanos[0];
            }

            @Override
            public void park(long wait) {
                nanos[0] += wait;
            }
        };
        PartitionLease lease = new PartitionLease(0, MINE, 2, LeaseRounds.TERM_NANOS, LeaseRounds.TAKEOVER_WAIT_NANOS);
        LeaseRounds.observe(lease, 0, PREVIOUS, PREVIOUS_RESERVED);     // the previous owner's reservation
        LeaseRounds.observe(lease, 1, MINE, -1);                        // this owner's lease record, read back
        LeaseRounds.confirmed(lease, 0, 1);
        nanos[0] = LeaseRounds.TAKEOVER_WAIT_NANOS + 10;                // the previous owner's term has run out
        LeaseRounds.confirmed(lease, nanos[0], nanos[0] + 1);
        nanos[0] += 2;
        return LeaseGuard.of(lease, new TaskId(0, 0), "partition 0", ticker);
    }

    private static long firstId(boolean resumeAboveCovered) {
        long[] nanos = {0};
        LeaseGuard guard = permittedLease(nanos);
        IdGenerator generator = new IdGenerator(LAYOUT, 0, WORKER, () -> NOW);
        WriteAhead[] ahead = new WriteAhead[1];
        // every reservation acknowledged when written, as under exactly-once
        ahead[0] = new WriteAhead(LAYOUT, 0, WORKER, 1_000, 0, guard, until -> {
            ahead[0].inLog(until);
            return true;
        }, "partition 0", waited -> { });
        Issuer issuer = new Issuer(guard, generator, ahead[0], Issuer.Steps.NONE, resumeAboveCovered);
        return issuer.issue();
    }
}
