package io.snowstamp.bench;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.CachedClock;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import io.snowstamp.stream.StampTopology;
import io.snowstamp.stream.StamperStats;
import io.snowstamp.resume.TailProbe;
import io.snowstamp.resume.TailGuard;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Measures topologies on one Kafka: each run reads the same pre-loaded input with a fresh
 * application id, fresh output topic and fresh state, so runs differ only in topology and settings.
 */
public final class Bench {
    /** What runs. */
    public enum Topo { IDENTITY, HEADER, JSON, JACKSON_UUID }

    /** Which Kafka settings: Kafka Streams' defaults, snowstamp's shipped ones, or the throughput profile. */
    public enum Settings { KAFKA_DEFAULTS, SHIPPED, THROUGHPUT }

    private static final long TIMEOUT_MILLIS = 600_000;

    private final Function<Map<String, String>, SnowstampConfig> configs;
    private final SnowstampConfig base;
    private final int partitions;
    private final String input;
    private final AtomicLong runs = new AtomicLong();

    /** @param configs the configuration with the given keys overriding the user's (connection, input topic, ...) */
    public Bench(Function<Map<String, String>, SnowstampConfig> configs, int partitions) {
        this.configs = configs;
        this.base = configs.apply(Map.of());
        this.partitions = partitions;
        this.input = base.topics().input();
    }

    /** Creates the input topic and writes {@code records} sample events (~80 bytes of JSON) to it. */
    public void load(long records) {
        createTopic(input);
        Properties p = KafkaSettings.producer(base.connection());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long n = 0; n < records; n++) {
                producer.send(new ProducerRecord<>(input, key(n), value(n)));
            }
            producer.flush();
        }
    }

    static byte[] key(long n) {
        return ("user-" + (n * 7919 % 1000)).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(long n) {
        return ("{\"event\":\"order.created\",\"n\":" + n + ",\"user\":\"user-" + (n * 7919 % 1000)
                + "\",\"amount\":" + (n % 100_000) / 100.0 + ",\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Runs one topology over the whole input and reports its steady rate: output records per second
     * while the output grows from 10% to 90% of the input. That leaves out what is not throughput —
     * task start-up before the first record, and the wait for the last commit (up to a whole commit
     * interval: 1 s in the throughput profile, a fifth of a 1,000,000-record run). The run still
     * waits until every input record is committed, and {@code seconds} is that whole time.
     */
    public BenchResult throughput(String name, Topo topo, Settings settings, long records) {
        Run run = new Run(topo, settings, Map.of());
        HeapSampler heap = new HeapSampler();
        try (run; heap) {
            long started = run.startAndAwaitRunning();
            double steady = run.steadyRate(records);
            run.awaitCommitted(records);
            double seconds = (System.nanoTime() - started) / 1e9;
            return new BenchResult(name, records, seconds, steady, run.cpuMicrosPerRecord, -1, -1, heap.peakMiB());
        }
    }

    /**
     * Produces at a steady {@code rate} for {@code seconds} while the topology runs, and measures
     * produce-to-read_committed latency of the output records (the first second is warm-up).
     */
    public BenchResult latency(String name, Topo topo, Settings settings, int rate, int seconds) {
        String latencyInput = input + "-latency-" + runs.incrementAndGet();
        createTopic(latencyInput);
        Run run = new Run(topo, settings, Map.of("input.topic", latencyInput));
        HeapSampler heap = new HeapSampler();
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        try (run; heap) {
            run.startAndAwaitRunning();
            AtomicBoolean producing = new AtomicBoolean(true);
            Thread consumer = new Thread(() -> readLatencies(run.output, producing, latencies), "bench-latency-consumer");
            consumer.start();
            long start = System.nanoTime();
            long total = (long) rate * seconds;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(KafkaSettings.producer(base.connection()))) {
                for (long n = 0; n < total; n++) {
                    long due = start + n * 1_000_000_000L / rate;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    producer.send(new ProducerRecord<>(latencyInput, null, System.currentTimeMillis(), key(n), value(n)));
                }
            }
            TimeUnit.SECONDS.sleep(3);          // let the last commit arrive
            producing.set(false);
            consumer.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted", e);
        }
        List<Long> sorted;
        synchronized (latencies) {
            sorted = new ArrayList<>(latencies.subList(Math.min(latencies.size(), rate), latencies.size()));
        }
        Collections.sort(sorted);
        if (sorted.isEmpty()) {
            throw new SnowstampException("latency run " + name + " saw no output records");
        }
        return new BenchResult(name, sorted.size(), seconds, rate, -1, percentile(sorted, 0.50), percentile(sorted, 0.99),
                heap.peakMiB());
    }

    private void readLatencies(String topic, AtomicBoolean producing, List<Long> latencies) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(KafkaSettings.consumer(base.connection()))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            while (producing.get()) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(50))) {
                    latencies.add(System.currentTimeMillis() - record.timestamp());
                }
            }
        }
    }

    private static double percentile(List<Long> sorted, double q) {
        return sorted.get((int) Math.min(sorted.size() - 1, Math.round(q * (sorted.size() - 1))));
    }

    private void createTopic(String name) {
        try (Admin admin = Admin.create(KafkaSettings.client(base.connection()))) {
            TopicAdmin.apply(admin, List.of(new TopicSpec(name, partitions, (short) -1, Map.of())));
        }
    }

    /** One KafkaStreams instance with a fresh application id, output topic and state directory. */
    private final class Run implements AutoCloseable {
        final String app;
        final String output;
        final SnowstampConfig config;
        final KafkaStreams streams;
        final TailGuard tailGuard;
        final Admin sampler;
        /** CPU time of this JVM (all threads, the embedded broker's included) per record in the steady window. */
        double cpuMicrosPerRecord = -1;

        Run(Topo topo, Settings settings, Map<String, String> overrides) {
            long n = runs.incrementAndGet();
            app = "snowstamp-bench-" + ProcessHandleHolder.PID + "-" + n;
            output = app + "-out";
            createTopic(output);
            createTopic(app + "-dlq");
            Map<String, String> raw = new java.util.HashMap<>(Map.of("application.id", app, "output.topic", output,
                    "dlq.topic", app + "-dlq", "instance.id", "bench",
                    "profile", settings == Settings.THROUGHPUT ? "throughput" : "default"));
            raw.putAll(overrides);
            if (topo == Topo.JSON) {
                raw.put("stamp.json-field", "id");
            }
            config = configs.apply(raw);
            Properties props = settings == Settings.KAFKA_DEFAULTS ? KafkaSettings.streamsUntuned(config.connection(), config.topics())
                    : KafkaSettings.streams(config.connection(), config.topics());
            Topology topology;
            if (topo == Topo.IDENTITY || topo == Topo.JACKSON_UUID) {
                tailGuard = null;
                topology = topo == Topo.IDENTITY ? BenchTopologies.identity(config.topics().input(), output)
                        : BenchTopologies.jacksonUuid(config.topics().input(), output);
            } else {
                tailGuard = new TailGuard(KafkaSettings.client(config.connection()), output, config.ids().layout(),
                        config.recovery().tailGuardTimeout());
                topology = StampTopology.build(config, CachedClock::millis, (TailProbe) tailGuard, new StamperStats());
            }
            streams = new KafkaStreams(topology, props);
            // ready before the start, so that the first samples of the output see it empty
            sampler = Admin.create(KafkaSettings.client(config.connection()));
            written(sampler);
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
            double lowNanos = -1;
            double lowCpu = 0;
            while (true) {
                long written = written(sampler);
                long now = System.nanoTime();
                long cpu = processCpuNanos();
                if (lowNanos < 0 && written >= low) {
                    double f = written == prevCount ? 1 : (double) (low - prevCount) / (written - prevCount);
                    lowNanos = prevNanos + f * (now - prevNanos);
                    lowCpu = prevCpu + f * (cpu - prevCpu);
                }
                if (lowNanos >= 0 && written >= high) {
                    double f = written == prevCount ? 1 : (double) (high - prevCount) / (written - prevCount);
                    double highNanos = prevNanos + f * (now - prevNanos);
                    double highCpu = prevCpu + f * (cpu - prevCpu);
                    if (highNanos <= lowNanos) {
                        throw new SnowstampException("bench application " + app + ": the output grew from 10% to 90% between two"
                                + " samples; use more --records");
                    }
                    cpuMicrosPerRecord = (highCpu - lowCpu) / 1e3 / (high - low);
                    return (high - low) / ((highNanos - lowNanos) / 1e9);
                }
                if (System.currentTimeMillis() > deadline || streams.state() == KafkaStreams.State.ERROR) {
                    throw new SnowstampException("bench application " + app + " wrote only " + written + " of " + records
                            + " records (" + streams.state() + ")");
                }
                prevCount = written;
                prevNanos = now;
                prevCpu = cpu;
                sleep(2);
            }
        }

        private long written(Admin admin) {
            Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request = new java.util.HashMap<>();
            for (int p = 0; p < partitions; p++) {
                request.put(new TopicPartition(output, p), org.apache.kafka.clients.admin.OffsetSpec.latest());
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
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnowstampException("interrupted", e);
        }
    }

    private static final class ProcessHandleHolder {
        static final long PID = ProcessHandle.current().pid();
    }

    /** Samples heap in use every 50 ms. */
    private static final class HeapSampler implements AutoCloseable {
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private final AtomicLong peak = new AtomicLong();
        private final Thread thread;
        private volatile boolean running = true;

        HeapSampler() {
            thread = new Thread(() -> {
                while (running) {
                    peak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "bench-heap-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        long peakMiB() {
            return peak.get() / (1024 * 1024);
        }

        @Override
        public void close() {
            running = false;
            thread.interrupt();
        }
    }
}
