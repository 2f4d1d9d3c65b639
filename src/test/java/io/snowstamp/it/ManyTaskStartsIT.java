package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.resume.TailPrefetch;
import io.snowstamp.runtime.StartStats;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.stream.Names;
import io.snowstamp.testing.ClientMetrics;
import io.snowstamp.testing.OnSharedBroker;
import io.snowstamp.testing.StampedRecords;
import io.snowstamp.testing.Stamper;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first start of one instance on 1,024 partitions (the layout's worker count) is bounded by
 * batched work, not by one round trip or one wait per task: every partition stamps its waiting
 * record, and the counts of what blocks the stream thread at a task start stay far below one per task
 * — the committed offsets Kafka Streams asks for at each task start (one request per batch of starting
 * tasks), the output tails the tail guard reads (one batch per handful of tasks, as {@link TailPrefetchIT}
 * counts), and the takeover waits of the lease (none in the stream thread: a task's input is held back
 * until its lease may issue). No time is asserted: on a loaded machine the start is slower, the counts
 * are the same.
 */
@Tag("integration")
@Tag("full")   // -Pfull only: minutes of child JVMs and session timeouts; the default tier stays under 8 minutes (development.md)
@Timeout(600)
@Order(8)   // among the longest: starts early in the parallel run (see development.md)
class ManyTaskStartsIT extends OnSharedBroker {
    private static final int PARTITIONS = 1024;

    @TempDir
    Path work;

    @Test
    void shouldStartAThousandTasksInBatchesOfWork() throws Exception {
        Stamper.Topics topics = Stamper.Topics.create(broker.bootstrapServers(), PARTITIONS);
        String application = TestBroker.unique("many-starts");
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), Map.of("kafka.bootstrap.servers", broker.bootstrapServers(),
                "state.dir", work.resolve("state").toString(), "instance.id", "many",
                "application.id", application,
                "input.topic", topics.in(), "output.topic", topics.out(), "dlq.topic", topics.dlq(),
                "id.worker-registry", "off"));
        StartStats starts;
        TailPrefetch.Stats tails;
        long takeoverParks;
        double tailGuardRequests;
        double produceRequests;
        double commits;
        try (StreamsRunner runner = new StreamsRunner(config, System::currentTimeMillis);
             KafkaProducer<byte[], byte[]> producer = broker.producer()) {
            for (int p = 0; p < PARTITIONS; p++) {      // waiting already: every task stamps right after its start
                producer.send(new ProducerRecord<>(topics.in(), p, null, ("{\"n\":" + p + "}").getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
            runner.start();
            assertThat(runner.awaitRunning(Duration.ofSeconds(300))).isTrue();
            assertThat(awaitStamped(topics.out(), 0, Duration.ofSeconds(240))).as("partitions with their record stamped")
                    .hasSize(PARTITIONS);
            starts = runner.taskStarts();
            tails = runner.tailPrefetch();
            takeoverParks = runner.leaseTakeoverParks();
            tailGuardRequests = ClientMetrics.consumerRequests("snowstamp-tail-guard-" + topics.out());

            // a second record per partition, every task running: what each commit sends
            double requestsBefore = streamProducerRequests(application);
            double commitsBefore = streamCommits(application);
            for (int p = 0; p < PARTITIONS; p++) {
                producer.send(new ProducerRecord<>(topics.in(), p, null, ("{\"n\":" + (PARTITIONS + p) + "}").getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
            assertThat(awaitStamped(topics.out(), PARTITIONS, Duration.ofSeconds(240))).as("partitions with their second record stamped")
                    .hasSize(PARTITIONS);
            produceRequests = streamProducerRequests(application) - requestsBefore;
            commits = streamCommits(application) - commitsBefore;
        } finally {
            for (String topic : List.of(topics.in(), topics.out(), topics.dlq(), Names.changelogTopic(application))) {
                TestBroker.deleteTopic(broker.bootstrapServers(), topic);   // 3,072 partitions fewer for the tests that follow
            }
        }

        String figures = starts + "; tails " + tails + "; " + takeoverParks + " takeover waits in the stream thread";
        System.out.println("ManyTaskStartsIT, " + PARTITIONS + " task starts: " + figures);
        // the mechanism, counted exactly: each task started once (a start again, as after an aborted transaction, would
        // fetch its committed offset and read its tail twice), its committed offset fetched with others', its input held
        // back beside the thread while its lease waited, and its tail read in a batch, never alone
        assertThat(starts.committedPartitions()).as(figures).isEqualTo(PARTITIONS);
        assertThat(starts.held()).as(figures).isEqualTo(PARTITIONS);
        assertThat(takeoverParks).as(figures).isZero();
        assertThat(tails.batchedPartitions()).as(figures).isEqualTo(PARTITIONS);
        assertThat(tails.served()).as(figures).isEqualTo(PARTITIONS);
        assertThat(tails.fallbacks()).as(figures).isZero();
        // how many batches Kafka Streams' hand-over of restored tasks makes varies with the load (a few): one per task
        // start would be 1,024 requests, one after another on the stream thread
        assertThat(starts.committedRequests()).as(figures).isBetween(1L, (long) PARTITIONS / 8);
        assertThat(tails.batches()).as(figures).isBetween(1L, (long) PARTITIONS / 8);
        // one tail read per task: an end-offsets request and a fetch each
        assertThat(tailGuardRequests).as(figures).isLessThan(PARTITIONS / 4.0);

        // each of the 1,024 tasks writes its state (a reservation, its last ID) in the commits that stamp its second record.
        // Kafka Streams flushes the producer once per task it commits: a state put made in that task's own flush (a cached
        // store, or a hook of its own) is one more request per task and commit. Sent together, a commit costs a few requests
        String commitCost = produceRequests + " requests of the stream thread's producer in " + commits + " commits";
        System.out.println("ManyTaskStartsIT, a record per task: " + commitCost);
        assertThat(commits).as(commitCost).isPositive();
        assertThat(produceRequests).as(commitCost).isLessThan(8 * commits + PARTITIONS / 4.0);
    }

    private static double streamProducerRequests(String application) throws Exception {
        return ClientMetrics.sum("kafka.producer:type=producer-metrics,client-id=" + application + "-*-StreamThread-*-producer",
                "request-total");
    }

    private static double streamCommits(String application) throws Exception {
        return ClientMetrics.sum("kafka.streams:type=stream-thread-metrics,thread-id=" + application + "-*-StreamThread-*",
                "commit-total");
    }

    /** The partitions whose record with an "n" of at least {@code minN} has been stamped, once all have or at the deadline. */
    private static Set<Integer> awaitStamped(String out, int minN, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Set<Integer> stamped = Set.of();
        while (System.nanoTime() < deadline) {
            stamped = StampedRecords.read(broker.bootstrapServers(), out).stream().filter(r -> r.n() >= minN)
                    .map(StampedRecords.Stamped::partition).collect(Collectors.toSet());
            if (stamped.size() >= PARTITIONS) {
                return stamped;
            }
            Thread.sleep(1000);
        }
        return stamped;
    }

}
