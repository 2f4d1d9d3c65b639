package io.snowstamp.resume;

import io.snowstamp.SnowstampException;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.OutputPartitions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tail guard on a fake output partition: it reads back past a newest stretch that holds none of the worker's IDs
 * (another stamper sharing the topic, records written without the header) to the worker's highest ID, in both the
 * per-task and the batched read ({@code recover} reads each partition through the per-task one), and a tail it cannot
 * read in time stops the task instead of answering with the part it read.
 */
class TailGuardTest {
    private static final IdLayout LAYOUT = IdLayout.preset("snowflake");
    private static final String OUTPUT = "events.stamped";
    private static final long DATACENTER = 0;
    private static final long WORKER = 7;
    private static final long OTHER_WORKER = 8;
    private static final long T0 = LAYOUT.unitsSinceEpoch(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    /** Records in the output partition. */
    private static final long END = 5_000;
    /** The newest records hold none of the worker's IDs: more than the first window (512) and the second (2,048) together. */
    private static final long FOREIGN = 3_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static ConsumerRecord<byte[], byte[]> record(String header, byte[] value) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(OUTPUT, 0, 0, null, new byte[0]);
        if (header != null) {
            record.headers().add(header, value);
        }
        return record;
    }

    /** The worker's ID at output offset {@code i} (one per record, rising with the offset, as its task issues them). */
    private static long ownId(long i) {
        return LAYOUT.encode(T0 + i, DATACENTER, WORKER, 0);
    }

    /**
     * Output offsets below {@code END - FOREIGN} hold the worker's IDs (text and compact format); the newest
     * {@code FOREIGN} hold records without an ID header, other workers' IDs in both formats (higher than any of the
     * worker's: their maximum is not the answer), and a malformed header.
     */
    private static ConsumerRecord<byte[], byte[]> foreignTail(long i) {
        if (i < END - FOREIGN) {
            return i % 2 == 0 ? record(IdHeader.ID, IdHeader.ascii(ownId(i))) : record(IdHeader.COMPACT_ID, IdHeader.binary(ownId(i)));
        }
        return switch ((int) (i % 4)) {
            case 0 -> record(null, null);
            case 1 -> record(IdHeader.ID, IdHeader.ascii(LAYOUT.encode(T0 + 10 * END + i, DATACENTER, OTHER_WORKER, 0)));
            case 2 -> record(IdHeader.COMPACT_ID, IdHeader.binary(LAYOUT.encode(T0 + 10 * END + i, DATACENTER, OTHER_WORKER + 1, 0)));
            default -> record(IdHeader.ID, "not-an-id".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        };
    }

    private static TailGuard guard(OutputPartitions outputs, Duration timeout) {
        return new TailGuard(new PartitionTail(outputs, OUTPUT, timeout), LAYOUT, timeout, null);
    }

    @Test
    void shouldReadBackPastANewestStretchWithoutTheWorkersIdsToItsHighestId() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 2).partition(1, 0, END, TailGuardTest::foreignTail);

        TailProbe.Result result = guard(outputs, TIMEOUT).highestIssued(1, DATACENTER, WORKER);

        assertThat(result.highestId()).as("the worker's newest ID, 3,000 records back").isEqualTo(ownId(END - FOREIGN - 1));
        assertThat(result.endOffset()).isEqualTo(END);
        assertThat(outputs.lowestRead(1)).as("it went back far enough to see one").isLessThan(END - FOREIGN);
    }

    @Test
    void shouldReadBackAlonePastANewestStretchWithoutTheWorkersIdsInABatch() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 2)
                .partition(0, 0, END, i -> record(IdHeader.ID, IdHeader.ascii(LAYOUT.encode(T0 + i, DATACENTER, WORKER + 100, 0))))
                .partition(1, 0, END, TailGuardTest::foreignTail);

        Map<Integer, TailProbe.Result> results = guard(outputs, TIMEOUT).highestIssued(Map.of(0, WORKER + 100, 1, WORKER), DATACENTER);

        assertThat(results.get(0).highestId()).as("its newest record holds its worker's ID")
                .isEqualTo(LAYOUT.encode(T0 + END - 1, DATACENTER, WORKER + 100, 0));
        assertThat(outputs.lowestRead(0)).as("the newest window was enough there").isEqualTo(END - 512);
        assertThat(results.get(1).highestId()).isEqualTo(ownId(END - FOREIGN - 1));
    }

    /**
     * The output's leader stops answering after part of the newest window: the guard must fail, naming the setting
     * to raise, within the timeout, and never start the task on the highest ID of the part it read (which is below what
     * the unread records may hold).
     */
    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)  // a read without a deadline fails here instead of hanging
    void shouldStopTheTaskNamingTheTimeoutWhenTheTailCannotBeReadInTime() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 2)
                .partition(1, 0, END, i -> record(IdHeader.ID, IdHeader.ascii(ownId(i))))
                .stallAt(1, END - 100);
        Duration timeout = Duration.ofMillis(300);

        long started = System.nanoTime();
        assertThatThrownBy(() -> guard(outputs, timeout).highestIssued(1, DATACENTER, WORKER))
                .isInstanceOf(SnowstampException.class)
                .hasMessageContaining("(it ran out of time: raise recovery.tail-guard-timeout)")
                .hasMessageContaining(OUTPUT + "-1");
        // the timeout, plus room for a slow, shared machine: not the minutes of a read that never ends
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(outputs.served()).as("part of the window came: a maximum was there to return").isEqualTo(412);
    }

    /** A failure that is no timeout does not send a person to raise the timeout (issue 41): its own message says what is wrong. */
    @Test
    void shouldNameTheTimeoutOnlyWhenTheReadRanOutOfTime() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 2);

        assertThatThrownBy(() -> guard(outputs, TIMEOUT).highestIssued(5, DATACENTER, WORKER))
                .isInstanceOf(SnowstampException.class)
                .hasMessageContaining("partition 5 of " + OUTPUT + " does not exist")
                .hasMessageNotContaining("recovery.tail-guard-timeout");
    }

    /** The batch fails as a whole too (its callers then read each partition alone, which fails as above). */
    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)  // a read without a deadline fails here instead of hanging
    void shouldFailTheBatchWhenAConsumerNeverReturnsRecords() {
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 2)
                .partition(0, 0, END, i -> record(IdHeader.ID, IdHeader.ascii(ownId(i))))
                .partition(1, 0, END, i -> record(IdHeader.ID, IdHeader.ascii(ownId(i))))
                .stallAt(0, 0)
                .stallAt(1, 0);

        assertThatThrownBy(() -> guard(outputs, Duration.ofMillis(300)).highestIssued(Map.of(0, WORKER, 1, WORKER), DATACENTER))
                .isInstanceOf(org.apache.kafka.common.errors.TimeoutException.class)
                .hasMessageContaining("not read to their end");
        assertThat(outputs.served()).isZero();
    }

    /**
     * A task's read further back for the inputs already stamped (at-least-once) runs on a reader of its own: while it waits
     * on a partition that does not answer, another task's start reads its tail at once (sharing one reader, it waited for
     * the whole read, up to the timeout: one task's wait held the others).
     */
    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldReadATailWhileAnotherTasksReadFurtherBackWaits() throws Exception {
        Duration timeout = Duration.ofSeconds(8);
        OutputPartitions far = new OutputPartitions(OUTPUT, 2).partition(0, 0, END, i -> record(null, null)).stallAt(0, END - 100);
        OutputPartitions outputs = new OutputPartitions(OUTPUT, 2).partition(1, 0, END, i -> record(IdHeader.ID, IdHeader.ascii(ownId(i))));
        TailGuard guard = new TailGuard(new PartitionTail(outputs, OUTPUT, timeout),
                purpose -> new PartitionTail(purpose.equals("stamped-inputs") ? far : outputs, OUTPUT, timeout),
                LAYOUT, timeout, "events.raw");
        java.util.concurrent.CompletableFuture<StampedInputs> waiting = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> guard.stampedInputs(0, "events.raw", 10));
        while (far.lowestRead(0) == Long.MAX_VALUE) {
            Thread.sleep(5);
        }

        long started = System.nanoTime();
        TailProbe.Result result = guard.highestIssued(1, DATACENTER, WORKER);
        long tookMillis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        assertThat(result.highestId()).isEqualTo(ownId(END - 1));
        assertThat(waiting).as("the read further back still waits").isNotDone();
        assertThat(tookMillis).as("the tail read did not wait for it").isLessThan(timeout.toMillis() / 2);
        assertThat(waiting).failsWithin(Duration.ofSeconds(20));     // it runs out of time on its own
    }
}
