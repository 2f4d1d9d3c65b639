package io.snowstamp.bench;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SchemaRegistrySettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.CachedClock;
import io.snowstamp.resume.TailGuard;
import io.snowstamp.resume.TailProbe;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.schema.HttpSchemaRegistry;
import io.snowstamp.schema.SchemaStamper;
import io.snowstamp.schema.Stamping;
import io.snowstamp.json.JsonIdSplicer;
import io.snowstamp.stream.StampTopology;
import io.snowstamp.stream.StamperStats;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * One KafkaStreams instance of the bench with a fresh application id, output topic and state directory,
 * and how it is measured: the output's growth and this process's CPU time.
 */
final class BenchRun implements AutoCloseable {
    final String app;
    final String output;
    final SnowstampConfig config;
    final KafkaStreams streams;
    final TailGuard tailGuard;
    final Admin sampler;
    /** CPU time of this JVM (all threads, the embedded broker's included) per record in the steady window. */
    double cpuMicrosPerRecord = -1;
    /** CPU time of the broker's process per record in the same window; -1 when not measured. */
    double brokerCpuMicrosPerRecord = -1;

    private static final long TIMEOUT_MILLIS = 600_000;
    /** How often the output's end offsets are read: often enough to place 10% and 90% within ~1%, rarely enough to cost little CPU here. */
    private static final long SAMPLE_MILLIS = 5;

    private final int partitions;
    private final ProcessHandle broker;

    /**
     * @param config the run's configuration: its application id, output topic (already created) and input
     * @param broker the broker's process on this machine, or null
     */
    BenchRun(SnowstampConfig config, Bench.Topo topo, Bench.Settings settings, int partitions, ProcessHandle broker, Bench.AvroInput avro) {
        this.config = config;
        this.broker = broker;
        this.partitions = partitions;
        this.app = config.connection().applicationId();
        this.output = config.topics().output();
        Properties props = settings == Bench.Settings.KAFKA_DEFAULTS ? KafkaSettings.streamsUntuned(config.connection(), config.topics()) : KafkaSettings.streams(config.connection(), config.topics(), partitions);
        Topology topology;
        String input = config.topics().input();
        tailGuard = topo.stamps() ? new TailGuard(KafkaSettings.client(config.connection()), output, config.ids().layout(),
                config.recovery().tailGuardTimeout()) : null;
        topology = switch (topo) {
            case IDENTITY -> BenchTopologies.identity(input, output);
            case JACKSON_UUID -> BenchTopologies.jacksonUuid(input, output);
            case UUID_HEADER -> BenchTopologies.uuidHeader(input, output);
            case FORWARD -> BenchTopologies.forward(input, output, BenchTopologies.Carry.NOTHING, null);
            case FORWARD_HEADERS -> BenchTopologies.forward(input, output, BenchTopologies.Carry.HEADERS, null);
            case FORWARD_COMPACT_HEADERS -> BenchTopologies.forward(input, output, BenchTopologies.Carry.COMPACT_HEADERS, null);
            case FORWARD_JSON -> BenchTopologies.forward(input, output, BenchTopologies.Carry.HEADERS_AND_JSON,
                    JsonIdSplicer.of(config.stamp()));
            case FORWARD_AVRO -> BenchTopologies.forward(input, output, resolved(config, avro));
            case AVRO_PEER -> AvroTopologies.peer(input, output, avro.schema(), resolved(config, avro).outputId());
            case HEADER, HEADER_NO_PROVENANCE, HEADER_COMPACT, JSON, JSON_COMPACT, AVRO ->
                    StampTopology.build(config, CachedClock::millis, (TailProbe) tailGuard, new StamperStats());
        };
        streams = new KafkaStreams(topology, props);
        // ready before the start, so that the first samples of the output see it empty
        sampler = Admin.create(KafkaSettings.client(config.connection()));
        written(sampler);
    }

    /** The Avro input's output schema, resolved and registered before the run as the stamper does it once per schema. */
    private static Stamping resolved(SnowstampConfig config, Bench.AvroInput avro) {
        SchemaRegistrySettings registry = config.schemaRegistry();
        return new SchemaStamper(config.stamp(), registry.subjectStrategy(), config.topics().output(), HttpSchemaRegistry.of(registry), 1)
                .inspect(AvroSampleValues.value(0, avro.schema(), avro.schemaId()));
    }

    long startAndAwaitRunning() {
        streams.start();
        long deadline = System.currentTimeMillis() + TIMEOUT_MILLIS;
        while (streams.state() != KafkaStreams.State.RUNNING) {
            if (System.currentTimeMillis() > deadline || !streams.state().isRunningOrRebalancing()
                    && streams.state() != KafkaStreams.State.CREATED) {
                throw new SnowstampException("bench application " + app + " did not reach RUNNING: " + streams.state());
            }
            sleep(10);
        }
        return System.nanoTime();
    }

    /**
     * Output records per second between 10% and 90% of {@code records}: the output partitions'
     * end offsets (read_uncommitted: a record counts when written, before its commit; transaction
     * markers take one offset per partition and commit, under 0.1% here) are sampled from the
     * start, and the times the output crossed 10% and 90% are interpolated between samples.
     */
    double steadyRate(long records) {
        long low = records / 10;
        long high = records - low;
        long deadline = System.currentTimeMillis() + TIMEOUT_MILLIS;
        long prevCount = 0;
        long prevNanos = System.nanoTime();
        long prevCpu = processCpuNanos();
        long prevBroker = brokerCpuNanos();
        double lowNanos = -1;
        double lowCpu = 0;
        double lowBroker = 0;
        while (true) {
            long written = written(sampler);
            long now = System.nanoTime();
            long cpu = processCpuNanos();
            long brokerCpu = brokerCpuNanos();
            if (lowNanos < 0 && written >= low) {
                double f = written == prevCount ? 1 : (double) (low - prevCount) / (written - prevCount);
                lowNanos = prevNanos + f * (now - prevNanos);
                lowCpu = prevCpu + f * (cpu - prevCpu);
                lowBroker = prevBroker + f * (brokerCpu - prevBroker);
            }
            if (lowNanos >= 0 && written >= high) {
                double f = written == prevCount ? 1 : (double) (high - prevCount) / (written - prevCount);
                double highNanos = prevNanos + f * (now - prevNanos);
                double highCpu = prevCpu + f * (cpu - prevCpu);
                double highBroker = prevBroker + f * (brokerCpu - prevBroker);
                if (highNanos <= lowNanos) {
                    throw new SnowstampException("bench application " + app + ": the output grew from 10% to 90% between two"
                            + " samples; use more --records");
                }
                cpuMicrosPerRecord = (highCpu - lowCpu) / 1e3 / (high - low);
                brokerCpuMicrosPerRecord = broker == null ? -1 : (highBroker - lowBroker) / 1e3 / (high - low);
                return (high - low) / ((highNanos - lowNanos) / 1e9);
            }
            if (System.currentTimeMillis() > deadline || streams.state() == KafkaStreams.State.ERROR) {
                throw new SnowstampException("bench application " + app + " wrote only " + written + " of " + records
                        + " records (" + streams.state() + ")");
            }
            prevCount = written;
            prevNanos = now;
            prevCpu = cpu;
            prevBroker = brokerCpu;
            sleep(SAMPLE_MILLIS);
        }
    }

    private long written(Admin admin) {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(output, p), OffsetSpec.latest());
        }
        try {
            long sum = 0;
            for (var info : admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).values()) {
                sum += info.offset();
            }
            return sum;
        } catch (Exception e) {
            throw new SnowstampException("cannot read the end offsets of " + output + ": " + e.getMessage(), e);
        }
    }

    void awaitCommitted(long records) {
        long deadline = System.currentTimeMillis() + TIMEOUT_MILLIS;
        try (Admin admin = Admin.create(KafkaSettings.client(config.connection()))) {
            while (committed(admin) < records) {
                if (System.currentTimeMillis() > deadline || streams.state() == KafkaStreams.State.ERROR) {
                    throw new SnowstampException("bench application " + app + " committed only " + committed(admin)
                            + " of " + records + " records (" + streams.state() + ")");
                }
                sleep(20);
            }
        }
    }

    private long committed(Admin admin) {
        try {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listStreamsGroupOffsets(
                    Map.of(app, new ListStreamsGroupOffsetsSpec())).partitionsToOffsetAndMetadata(app).get(30, TimeUnit.SECONDS);
            long sum = 0;
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                if (e.getKey().topic().equals(config.topics().input()) && e.getValue() != null) {
                    sum += e.getValue().offset();
                }
            }
            return sum;
        } catch (Exception e) {
            return 0;       // the group may not exist yet
        }
    }

    @Override
    public void close() {
        streams.close(Duration.ofSeconds(30));
        streams.cleanUp();
        sampler.close();
        if (tailGuard != null) {
            tailGuard.close();
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /**
     * The broker process's CPU time (the OS counts it in clock ticks, 10 ms: over a steady window of seconds that is
     * well under 1%); 0 when not measured.
     */
    private long brokerCpuNanos() {
        if (broker == null) {
            return 0;
        }
        return broker.info().totalCpuDuration().orElseThrow(() -> new SnowstampException("cannot read the CPU time of the"
                + " broker's process " + broker.pid() + " any more (did it stop?)")).toNanos();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted", e);
        }
    }
}
