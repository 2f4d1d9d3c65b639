package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.resume.PartitionTail;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.OutputPartitions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The sequence tail scan on a fake output partition: the highest number of each tag from the covered offset on, and a
 * partition it cannot read within {@code recovery.tail-guard-timeout} fails the start with a line naming that key,
 * never a scan of the part it read (a tag resumed from it could number again what the unread part holds).
 */
class SequenceTailReaderTest {
    private static final String OUTPUT = "orders.numbered";
    private static final long END = 5_000;

    /** Record {@code i} numbers tag "even" or "odd" with {@code i} (one in seven a record without tag, as snowflake output). */
    private static ConsumerRecord<byte[], byte[]> numbered(long i) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(OUTPUT, 0, 0, null, new byte[0]);
        if (i % 7 != 3) {
            record.headers().add(IdHeader.TAG, (i % 2 == 0 ? "even" : "odd").getBytes(StandardCharsets.UTF_8));
        }
        record.headers().add(IdHeader.ID, IdHeader.ascii(i));
        return record;
    }

    private static SequenceTailReader reader(OutputPartitions outputs, Duration timeout) {
        return new SequenceTailReader(new PartitionTail(outputs, OUTPUT, timeout), timeout);
    }

    @Test
    void shouldFindTheHighestNumberOfEachTagFromTheCoveredOffsetOn() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 3).partition(2, 0, END, SequenceTailReaderTest::numbered);

        SequenceTail.Scan scan = reader(outputs, Duration.ofSeconds(30)).scan(2, 1_000);

        assertThat(scan.highest()).isEqualTo(Map.of("even", END - 2, "odd", END - 1));
        assertThat(scan.fromOffset()).isEqualTo(1_000);
        assertThat(scan.endOffset()).isEqualTo(END);
        assertThat(outputs.lowestRead(2)).isEqualTo(1_000);
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)  // a read without a deadline fails here instead of hanging
    void shouldFailTheStartNamingTheTimeoutWhenThePartitionIsNotReadInTime() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 3).partition(2, 0, END, SequenceTailReaderTest::numbered)
                .stallAt(2, 4_000);     // the leader stops answering a thousand records before the end
        Duration timeout = Duration.ofMillis(300);

        long started = System.nanoTime();
        assertThatThrownBy(() -> reader(outputs, timeout).scan(2, -1))
                .isInstanceOf(SnowstampException.class)
                .hasMessageContaining("(it ran out of time: raise recovery.tail-guard-timeout)")
                .hasMessageContaining(OUTPUT + "-2");
        // the timeout, plus room for a slow, shared machine: not a scan that never ends
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(outputs.served()).as("4,000 records came: a partial maximum was there to return").isEqualTo(4_000);
    }

    /** A failure that is no timeout does not send a person to raise the timeout (issue 41): its own message says what is wrong. */
    @Test
    void shouldNameTheTimeoutOnlyWhenTheScanRanOutOfTime() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 3);

        assertThatThrownBy(() -> reader(outputs, Duration.ofSeconds(30)).scan(5, -1))
                .isInstanceOf(SnowstampException.class)
                .hasMessageContaining("partition 5 of " + OUTPUT + " does not exist")
                .hasMessageNotContaining("recovery.tail-guard-timeout");
    }
}
