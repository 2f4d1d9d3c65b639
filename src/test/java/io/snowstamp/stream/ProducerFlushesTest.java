package io.snowstamp.stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The proof that a send is durable: a flush after it, and no send failed from the flush before it on. */
class ProducerFlushesTest {
    @Test
    void shouldProveASendDurableOnlyOnceALaterFlushReturnedWithNoFailureSinceTheFlushBeforeIt() {
        ProducerFlushes flushes = new ProducerFlushes(() -> { });

        assertThat(flushes.durableAfter(0)).as("no flush yet").isFalse();
        flushes.flushed();
        assertThat(flushes.durableAfter(0)).isTrue();
        assertThat(flushes.durableAfter(1)).as("sent after the only flush").isFalse();

        flushes.failed();
        flushes.flushed();
        assertThat(flushes.durableAfter(1)).as("a send failed before flush 2").isFalse();
        flushes.flushed();
        assertThat(flushes.durableAfter(1)).as("still: sent before the failure was told").isFalse();
        assertThat(flushes.durableAfter(2)).as("sent after flush 2, flushed clean by flush 3").isTrue();
        assertThat(flushes.flushes()).isEqualTo(3);
    }

    @Test
    void shouldBeFoundByTheThreadThatSentWithIt() throws InterruptedException {
        ProducerFlushes flushes = new ProducerFlushes(() -> { });
        flushes.sending();
        ProducerFlushes[] seen = new ProducerFlushes[1];
        Thread other = new Thread(() -> seen[0] = ProducerFlushes.ofThisThread());
        other.start();
        other.join();

        assertThat(ProducerFlushes.ofThisThread()).isSameAs(flushes);
        assertThat(seen[0]).as("another thread sent with none").isNull();
    }
}
