package io.snowstamp.stream;

import io.snowstamp.id.IdLayout;
import io.snowstamp.testing.AnsweringTicker;
import org.apache.kafka.streams.errors.TaskMigratedException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

class WriteAheadTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final long T = 1_000_000;

    private final AnsweringTicker ticker = new AnsweringTicker();
    private final List<Long> written = new ArrayList<>();
    private final List<Long> waits = new ArrayList<>();
    private boolean mayWrite = true;
    private long ackAfterNanos = 2_000_000;

    private WriteAhead ahead(long windowUnits, int partition) {
        WriteAhead[] box = new WriteAhead[1];
        WriteAhead ahead = new WriteAhead(LAYOUT, 0, 3, windowUnits, partition, ticker, until -> {
            if (!mayWrite) {
                return false;
            }
            written.add(until);
            ticker.answer(ackAfterNanos, () -> box[0].acknowledged(until));
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

    @Test
    void shouldKeepTheHighestAcknowledgementWhateverOrderTheyCome() {
        WriteAhead ahead = ahead(1_000, 0);
        ahead.acknowledged(until(T + 2_000));
        ahead.acknowledged(until(T + 1_000));

        assertThat(ahead.acked()).isEqualTo(until(T + 2_000));
    }
}
