package io.snowstamp.it.fault;

import io.snowstamp.testing.ChildJvm;
import io.snowstamp.testing.Faketime;
import io.snowstamp.testing.LoggedClock;
import io.snowstamp.testing.NumberedProducer;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.Postgres;
import io.snowstamp.testing.SharedPostgres;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.StampedRecords.Stamped;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TableCopy;
import io.snowstamp.testing.TableCopy.AtCrash;
import io.snowstamp.testing.TableCopy.Row;
import io.snowstamp.testing.TestBroker;
import io.snowstamp.testing.Timeline;
import io.snowstamp.testing.TopicEnds;
import io.snowstamp.testing.Verification;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The plain-consumer recipe of {@code consuming.md} ({@link io.snowstamp.testing.DocumentedConsumer},
 * the page's code) against a real PostgreSQL, while things break: the stamper is SIGKILLed and
 * restarted, the consumer dies between its database commit and its offset commit and starts again,
 * and in the last test the stamper loses its changelog and local state and comes back an hour behind.
 * The table's constraints judge: {@code id} is the primary key, {@code source} unique, and the consumer
 * inserts with {@code ON CONFLICT DO NOTHING}, so an ID issued twice would show as a missing row.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: a PostgreSQL server and a stamper SIGKILLed in both modes (development.md)
@Timeout(300)
@ExtendWith(SharedPostgres.class)
class PostgresConsumerIT extends OnSharedBroker {
    private static final int BATCH = 1_500;
    private static final int RATE = 300;
    /** The consumer dies after this many database commits (one per non-empty poll). */
    private static final int CRASH_AFTER = 3;

    private static Postgres postgres;

    @TempDir
    Path work;

    @BeforeAll
    static void usePostgres(Postgres shared) {
        postgres = shared;
    }

    /**
     * Exactly-once: the stamper is SIGKILLed while it stamps and restarted; the consumer dies once
     * after a database commit. One row per input event, each with the ID of the committed output
     * record of its source, and no other.
     */
    @Test
    void shouldInsertEveryEventOnceUnderExactlyOnceWhileStamperAndConsumerCrash() throws Exception {
        Timeline timeline = new Timeline("pg-eos");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        String url = table("eos");

        try (NumberedProducer producer = new NumberedProducer(broker.bootstrapServers(), topics.in(), NumberedProducer.UNTIL_STOPPED, RATE).start();
             TableCopy copy = TableCopy.start(broker.bootstrapServers(), TestBroker.unique("db"), topics.out(), url, CRASH_AFTER);
             ChildJvm first = stamper.start(); TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            assertThat(ends.awaitEveryPartitionCommitted(topics.out(), 50, Duration.ofSeconds(120))).as(first.logs()).isTrue();
            first.kill();
            Map<Integer, Long> killedAt = ends.perPartition(topics.out());
            timeline.mark("stamper killed while stamping; output ends %s", killedAt);
            try (ChildJvm second = stamper.restartAfterCrash(refusal -> timeline.mark("restart refused: %s", refusal))) {
                assertThat(ends.awaitEveryPartitionGrown(topics.out(), killedAt, 50, Duration.ofSeconds(120))).as(second.logs()).isTrue();
                long produced = producer.stop();
                Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, produced);
                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(produced));

                copy.await(produced, true, Duration.ofSeconds(90));
                List<Stamped> output = StampedRecords.read(broker.bootstrapServers(), topics.out());
                List<Row> rows = copy.rows();
                timeline.mark("%d events, %d committed output records, %d rows", produced, output.size(), rows.size());

                assertThat(rows).as("one row per committed output record: its ID, its source, its event")
                        .containsExactlyInAnyOrderElementsOf(output.stream().map(PostgresConsumerIT::row).toList());
                assertReplayed(copy.atCrash(), output);
                assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
            }
        }
    }

    /**
     * At-least-once without the tail guard: the stamper is SIGKILLed with a batch stamped whose input offsets it had not
     * committed, so that batch is stamped again with new IDs (both copies committed); the consumer dies
     * once after a database commit. Still one row per input event (the unique {@code source} skips the
     * second copy), each with an ID that a committed output record of its source carries.
     */
    @Test
    void shouldInsertEveryEventOnceUnderAtLeastOnceThroughTheUniqueSource() throws Exception {
        Timeline timeline = new Timeline("pg-alos");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a")
                .with("processing.guarantee", "at_least_once")
                .with("kafka.commit.interval.ms", "10000")
                // without the tail guard the next owner does not read which inputs the killed one stamped: the second
                // copies this recipe is for (with it, none would be made; AtLeastOnceKillIT)
                .with("recovery.tail-guard", "false");
        String url = table("alos");

        try (TableCopy copy = TableCopy.start(broker.bootstrapServers(), TestBroker.unique("db"), topics.out(), url, CRASH_AFTER);
             TopicEnds ends = new TopicEnds(broker.bootstrapServers())) {
            try (ChildJvm first = stamper.start()) {
                NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, BATCH);
                TestBroker.awaitCommitted(broker.bootstrapServers(), stamper.applicationId(), topics.in(), BATCH, Duration.ofSeconds(60));
                // right after a commit: the next one is 10 s away
                NumberedProducer.send(broker.bootstrapServers(), topics.in(), BATCH, BATCH);
                assertThat(ends.awaitAbove(topics.out(), 2 * BATCH - 1, Duration.ofSeconds(30))).as(first.logs()).isTrue();
                first.kill();
                assertThat(TestBroker.committedOffsets(broker.bootstrapServers(), stamper.applicationId(), topics.in())
                        .values().stream().mapToLong(Long::longValue).sum())
                        .as("input offsets committed before the kill (the second batch's must not be)").isEqualTo(BATCH);
                timeline.mark("stamper killed with %d records stamped, %d committed", 2 * BATCH, BATCH);
            }
            try (ChildJvm second = stamper.restartAfterCrash(refusal -> timeline.mark("restart refused: %s", refusal))) {
                Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, 3 * BATCH);
                // the uncommitted batch again, and records set aside at the first start that were stamped within the commit
                // before the kill (they leave the store at the end of a commit after their stamping, and the
                // kill may come before that; without the output read they go again: consuming.md): at least the batch, never a duplicate ID, nothing missing
                assertThat(verify.summaryLine()).as(verify.toString())
                        .startsWith("records=").contains(" duplicates=0 missing=0 extra=");
                assertThat(verify.extra()).as(verify.toString()).isGreaterThanOrEqualTo(BATCH);

                copy.await(2 * BATCH, true, Duration.ofSeconds(90));
                List<Stamped> output = StampedRecords.read(broker.bootstrapServers(), topics.out());
                List<Row> rows = copy.rows();
                timeline.mark("%d events, %d committed output records, %d rows", 2 * BATCH, output.size(), rows.size());

                Map<Long, Stamped> byId = output.stream().collect(Collectors.toMap(Stamped::id, Function.identity()));
                assertThat(rows).as("one row per input event").hasSize(2 * BATCH)
                        .extracting(Row::n).doesNotHaveDuplicates()
                        .containsExactlyInAnyOrderElementsOf(output.stream().map(Stamped::n).distinct().toList());
                assertThat(rows).as("every row is a committed output record: its ID, its source, its event")
                        .allSatisfy(r -> assertThat(row(byId.get(r.id()))).isEqualTo(r));
                assertReplayed(copy.atCrash(), output);
                assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
            }
        }
    }

    /**
     * The promise, judged by the table: stamp and insert; stop the stamper, delete its changelog and
     * local state; start it again with its clock an hour behind; stamp and insert more. Every new
     * record gets a row of its own: an ID equal to one already in the table would have been skipped by
     * {@code ON CONFLICT DO NOTHING} on the primary key, leaving its event without a row.
     */
    @Test
    void shouldNeverCollideInTheTableAfterLosingTheStateAndRestartingAnHourBehind() throws Exception {
        Faketime.assumeAvailable();
        Timeline timeline = new Timeline("pg-promise");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        String url = table("promise");

        try (TableCopy copy = TableCopy.start(broker.bootstrapServers(), TestBroker.unique("db"), topics.out(), url, 0)) {
            try (ChildJvm first = stamper.start()) {
                NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, BATCH);
                Verification.awaitStamped(broker.bootstrapServers(), topics, BATCH);
                assertThat(first.terminate(60)).as(first.logs()).isIn(0, 143);
            }
            copy.await(BATCH, false, Duration.ofSeconds(90));
            TestBroker.deleteTopic(broker.bootstrapServers(), stamper.applicationId() + "-worker-state-changelog");
            stamper.deleteStateDir();
            timeline.mark("%d rows; changelog and local state deleted", BATCH);

            Instant realStart = Instant.now();
            try (ChildJvm second = stamper.withClockOffset("-1h").start()) {
                NumberedProducer.send(broker.bootstrapServers(), topics.in(), BATCH, BATCH);
                Verification verify = Verification.awaitStamped(broker.bootstrapServers(), topics, 2 * BATCH);
                assertThat(verify.summaryLine()).as(verify.toString()).isEqualTo(Verification.clean(2 * BATCH));
                List<Instant> clocks = LoggedClock.readings(second.stderr());
                assertThat(clocks).as("the restarted stamper's clock\n%s", second.logs()).isNotEmpty().allSatisfy(clock ->
                        assertThat(clock).isBetween(realStart.minus(Duration.ofMinutes(62)), realStart.minus(Duration.ofMinutes(55))));

                copy.await(2 * BATCH, false, Duration.ofSeconds(90));
                List<Stamped> output = StampedRecords.read(broker.bootstrapServers(), topics.out());
                List<Row> rows = copy.rows();
                timeline.mark("%d rows after the restart an hour behind", rows.size());
                assertThat(rows).as("every event of both runs has its row, under the ID its output record carries")
                        .containsExactlyInAnyOrderElementsOf(output.stream().map(PostgresConsumerIT::row).toList());
                for (int partition = 0; partition < 4; partition++) {
                    int p = partition;
                    long lastOfFirst = output.stream().filter(r -> r.partition() == p && r.n() < BATCH).mapToLong(Stamped::id).max().orElseThrow();
                    assertThat(output).filteredOn(r -> r.partition() == p && r.n() >= BATCH).as("partition %d, second run", p).isNotEmpty()
                            .allSatisfy(r -> assertThat(r.id()).as("above the first run's last ID of the partition").isGreaterThan(lastOfFirst));
                }
                assertThat(second.terminate(60)).as(second.logs()).isIn(0, 143);
            }
        }
    }

    /**
     * Header mode passes any value through, and the recipe's payload is {@code jsonb}: a value that is not JSON,
     * and a JSON string holding U+0000 (which {@code jsonb} cannot store), go to {@code events_refused}
     * with PostgreSQL's reason, and the copy goes on. Without that, the one bad value rolls its batch back, the
     * consumer stops, and every restart replays the same batch: the copy stops for good.
     */
    @Test
    void shouldSetAsideTheValuesTheTableRefusesAndCopyOn() throws Exception {
        Timeline timeline = new Timeline("pg-refused");
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), 4);
        Stamper stamper = Stamper.of(work, broker.bootstrapServers(), TestBroker.unique("app"), topics, "a");
        String url = table("refused");
        List<String> refusedValues = List.of("not json", "{\"note\":\"a\\u0000b\"}");

        try (TableCopy copy = TableCopy.start(broker.bootstrapServers(), TestBroker.unique("db"), topics.out(), url, 0);
             ChildJvm running = stamper.start()) {
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), 0, BATCH);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                for (int partition = 0; partition < refusedValues.size(); partition++) {
                    producer.send(new ProducerRecord<>(topics.in(), partition, null, refusedValues.get(partition).getBytes(StandardCharsets.UTF_8)));
                }
            }
            NumberedProducer.send(broker.bootstrapServers(), topics.in(), BATCH, BATCH);   // behind them in their partitions
            copy.await(2 * BATCH, false, Duration.ofSeconds(90));
            List<Stamped> output = StampedRecords.read(broker.bootstrapServers(), topics.out());
            List<TableCopy.Refused> refused = copy.refused();
            timeline.mark("%d committed output records, %d rows, %d refused: %s", output.size(), copy.count(), refused.size(), refused);

            assertThat(output).as("every input record stamped").hasSize(2 * BATCH + refusedValues.size());
            assertThat(copy.rows()).as("every JSON value has its row, under the ID its output record carries")
                    .containsExactlyInAnyOrderElementsOf(output.stream().filter(r -> r.n() >= 0).map(PostgresConsumerIT::row).toList());
            assertThat(refused).as("the values events refused, with their ID, source and the database's reason")
                    .extracting(TableCopy.Refused::id, TableCopy.Refused::source, TableCopy.Refused::value)
                    .containsExactlyInAnyOrderElementsOf(output.stream().filter(r -> r.n() < 0)
                            .map(r -> tuple(r.id(), r.source(), refusedValues.get(r.partition()))).toList());
            assertThat(refused).extracting(TableCopy.Refused::reason)
                    .anySatisfy(reason -> assertThat(reason).containsIgnoringCase("json"))
                    .anySatisfy(reason -> assertThat(reason).containsIgnoringCase("unicode"));
            assertThat(running.terminate(60)).as(running.logs()).isIn(0, 143);
        }
    }

    // ---- steps --------------------------------------------------------------------------------

    /** A schema of this test's own with the recipe's table; the JDBC URL that finds it. */
    private static String table(String name) throws Exception {
        String url = postgres.url(postgres.createSchema(name));
        TableCopy.createTable(url);
        return url;
    }

    private static Row row(Stamped record) {
        return new Row(record.id(), record.source(), record.n());
    }

    /**
     * The consumer's crash left rows in the table whose offsets its group had not committed, and the
     * restarted consumer read those records again (the rows above prove it added no second row):
     * the replay the recipe's rule 3 exists for really happened.
     */
    private static void assertReplayed(AtCrash atCrash, List<Stamped> output) {
        assertThat(atCrash).as("the consumer crashed between a database commit and its offset commit").isNotNull();
        long replayed = output.stream()
                .filter(r -> r.offset() >= atCrash.committed().getOrDefault(r.partition(), 0L))
                .filter(r -> atCrash.ids().contains(r.id()))
                .count();
        assertThat(replayed).as("records inserted but not committed as consumed when the consumer crashed").isPositive();
    }
}
