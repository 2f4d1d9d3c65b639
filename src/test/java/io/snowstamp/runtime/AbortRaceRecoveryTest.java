package io.snowstamp.runtime;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class AbortRaceRecoveryTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final AbortRaceRecovery recovery = new AbortRaceRecovery(now::get);

    private static Throwable commitRace() {
        return new StreamsException("Error encountered trying to commit a transaction",
                new InvalidTxnStateException("The producer attempted a transactional operation in an invalid state."));
    }

    @Test
    void shouldReplaceTheThreadWhenItsCommitRacedTheCoordinatorsAbort() {
        assertThat(recovery.replace(commitRace())).isTrue();
    }

    @Test
    void shouldStopOnAnyOtherError() {
        assertThat(recovery.replace(new StreamsException("boom", new KafkaException("other")))).isFalse();
        assertThat(recovery.replace(new StreamsException("fenced", new ProducerFencedException("x")))).isFalse();
        assertThat(recovery.replace(new IllegalStateException("bug"))).isFalse();
    }

    @Test
    void shouldStopWhenTheRaceKeepsKillingThreads() {
        for (int i = 0; i < AbortRaceRecovery.LIMIT; i++) {
            assertThat(recovery.replace(commitRace())).as("replacement %d", i + 1).isTrue();
        }
        assertThat(recovery.replace(commitRace())).isFalse();
        now.addAndGet(AbortRaceRecovery.WINDOW_MILLIS);
        assertThat(recovery.replace(commitRace())).as("the window has passed").isTrue();
    }
}
