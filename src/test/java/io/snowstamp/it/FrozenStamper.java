package io.snowstamp.it;

import io.snowstamp.config.ConfigLoader;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdLayout;
import io.snowstamp.runtime.StreamsRunner;
import io.snowstamp.state.IdHeader;
import io.snowstamp.testing.TestBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The stamper in this JVM through {@link StreamsRunner}, with its clock frozen at one instant.
 * With a frozen clock every run issues IDs from the same time unit on, so a run that did not
 * resume above the IDs of an earlier run would repeat them: what protects the IDs is then the
 * state (or the tail guard), never the clock moving on.
 */
final class FrozenStamper implements AutoCloseable {
    static final IdLayout LAYOUT = IdLayout.preset("snowflake");

    private final StreamsRunner runner;

    private FrozenStamper(StreamsRunner runner) {
        this.runner = runner;
    }

    /** Topics of one test: input, output and dead letters. */
    record Topics(String in, String out, String dlq) {
        static Topics create(TestBroker broker, String prefix, int partitions) throws Exception {
            Topics topics = new Topics(TestBroker.unique(prefix + "-in"), TestBroker.unique(prefix + "-out"), TestBroker.unique(prefix + "-dlq"));
            broker.createTopic(topics.in, partitions);
            broker.createTopic(topics.out, partitions);
            broker.createTopic(topics.dlq, 1);
            return topics;
        }

        /** {@code --set} arguments naming these topics, for CLI commands. */
        String[] settings() {
            return new String[]{"--set", "input.topic=" + in, "--set", "output.topic=" + out, "--set", "dlq.topic=" + dlq};
        }
    }

    /** Starts the stamper and waits until it is RUNNING. */
    static FrozenStamper start(TestBroker broker, Topics topics, String applicationId, String instanceId, Path stateDir,
                               long frozenMillis, Map<String, String> extra) throws InterruptedException {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("kafka.bootstrap.servers", broker.bootstrapServers());
        settings.put("application.id", applicationId);
        settings.put("instance.id", instanceId);
        settings.put("state.dir", stateDir.toString());
        settings.put("input.topic", topics.in());
        settings.put("output.topic", topics.out());
        settings.put("dlq.topic", topics.dlq());
        settings.put("id.worker-registry", "off");     // many applications with the default offset share the test broker
        settings.putAll(extra);
        SnowstampConfig config = ConfigLoader.load(null, Map.of(), settings);
        StreamsRunner runner = new StreamsRunner(config, () -> frozenMillis);
        runner.start();
        if (!runner.awaitRunning(Duration.ofSeconds(90))) {
            runner.close();
            throw new AssertionError("the stamper did not reach RUNNING within 90 s (state " + runner.state() + ")");
        }
        return new FrozenStamper(runner);
    }

    @Override
    public void close() {
        runner.close(Duration.ofSeconds(30));
    }

    /** The ID header of a stamped record. */
    static long id(ConsumerRecord<byte[], byte[]> record) {
        return Long.parseLong(new String(record.headers().lastHeader(IdHeader.ID).value(), StandardCharsets.US_ASCII));
    }

    /** Highest ID per output partition among {@code records}. */
    static Map<Integer, Long> highestPerPartition(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<Integer, Long> highest = new TreeMap<>();
        records.forEach(r -> highest.merge(r.partition(), id(r), Math::max));
        return highest;
    }

    /** A wall-clock instant a day ago, on a whole second: far from now, so only state can move IDs past it. */
    static long aDayAgo() {
        return (System.currentTimeMillis() - 86_400_000L) / 1000 * 1000;
    }

    /** Produces {@code count} records and waits until the output holds {@code expectedTotal} (fails otherwise). */
    static List<ConsumerRecord<byte[], byte[]>> stamp(TestBroker broker, Topics topics, long first, long count, int expectedTotal) {
        broker.produce(topics.in(), first, count);
        List<ConsumerRecord<byte[], byte[]>> out = broker.consume(topics.out(), expectedTotal, Duration.ofSeconds(60));
        if (out.size() != expectedTotal) {
            throw new AssertionError("expected " + expectedTotal + " stamped records in " + topics.out() + ", found " + out.size());
        }
        return out;
    }

    /** Deletes a topic and waits until the broker no longer lists it. */
    static void deleteTopic(TestBroker broker, String topic) throws Exception {
        TestBroker.deleteTopic(broker.bootstrapServers(), topic);
    }
}
