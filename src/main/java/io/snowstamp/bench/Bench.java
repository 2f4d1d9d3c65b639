package io.snowstamp.bench;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.runtime.KafkaSettings;
import io.snowstamp.runtime.TopicAdmin;
import io.snowstamp.runtime.TopicSpec;
import io.snowstamp.schema.HttpSchemaRegistry;
import io.snowstamp.schema.RegisteredSchema;
import org.apache.avro.Schema;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
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
    public enum Topo {
        IDENTITY, HEADER, HEADER_NO_PROVENANCE, JSON, JACKSON_UUID,
        /** The stamper with {@code stamp.header-format=compact}, header mode and JSON mode. */
        HEADER_COMPACT, JSON_COMPACT,
        /** The stamper's topology with a processor that only forwards (see {@link BenchTopologies#forward}). */
        FORWARD,
        /** As {@link #FORWARD}, adding the stamper's two headers (no ID issued): header mode's floor. */
        FORWARD_HEADERS,
        /** As {@link #FORWARD_HEADERS} in the compact format: compact header mode's floor. */
        FORWARD_COMPACT_HEADERS,
        /** As {@link #FORWARD_HEADERS}, splicing the number into the JSON value too: JSON mode's floor. */
        FORWARD_JSON,
        /** A random UUID's text in a header: header mode's peer. */
        UUID_HEADER,
        /** The stamper with {@code stamp.value-format=avro} on Avro values (needs a schema registry). */
        AVRO,
        /** The stamper's topology carrying the Avro mode's bytes from a schema resolved before the run, no ID: its floor. */
        FORWARD_AVRO,
        /** Decode to a {@code GenericRecord}, set the field, encode with the output schema: the Avro mode's peer. */
        AVRO_PEER;

        /** Whether this reads Avro values framed for a schema registry. */
        boolean avro() {
            return this == AVRO || this == FORWARD_AVRO || this == AVRO_PEER;
        }

        /** Whether this is snowstamp itself, which issues IDs (and reads its output's tail at task start). */
        boolean stamps() {
            return switch (this) {
                case HEADER, HEADER_NO_PROVENANCE, HEADER_COMPACT, JSON, JSON_COMPACT, AVRO -> true;
                default -> false;
            };
        }
    }

    /**
     * A loaded input topic.
     *
     * @param valueBytes      the value size asked for ({@link SampleValues#value})
     * @param meanValueBytes  the values' mean size as loaded (the sample varies by a few bytes)
     */
    public record Input(String topic, long records, int valueBytes, double meanValueBytes) {
    }

    /** An Avro input's schema and its ID in the registry ({@link #loadAvro}). */
    record AvroInput(Schema schema, int schemaId) {
    }

    /** Which Kafka settings: Kafka Streams' defaults, snowstamp's shipped ones, or the throughput profile. */
    public enum Settings { KAFKA_DEFAULTS, SHIPPED, THROUGHPUT }

    private final Function<Map<String, String>, SnowstampConfig> configs;
    private final SnowstampConfig base;
    private final int partitions;
    private final String input;
    private final AtomicLong runs = new AtomicLong();
    /** Avro inputs by topic. */
    private final Map<String, AvroInput> avroInputs = new java.util.concurrent.ConcurrentHashMap<>();
    /** The broker's process, when it runs on this machine and its CPU is to be measured too; null otherwise. */
    private final ProcessHandle broker;

    /** @param configs the configuration with the given keys overriding the user's (connection, input topic, ...) */
    public Bench(Function<Map<String, String>, SnowstampConfig> configs, int partitions) {
        this(configs, partitions, null);
    }

    /** @param broker the broker's process on this machine, whose CPU time per record is measured too (null: not measured) */
    public Bench(Function<Map<String, String>, SnowstampConfig> configs, int partitions, ProcessHandle broker) {
        this.broker = broker;
        this.configs = configs;
        this.base = configs.apply(Map.of());
        this.partitions = partitions;
        this.input = base.topics().input();
    }

    /**
     * Creates an input topic for values of {@code valueBytes} and writes {@code records} sample events to it
     * ({@link SampleValues}: JSON, padded to that size).
     */
    public Input load(long records, int valueBytes) {
        String topic = input + "-" + valueBytes;
        createTopic(topic);
        Properties p = KafkaSettings.producer(base.connection());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        long bytes = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long n = 0; n < records; n++) {
                byte[] value = SampleValues.value(n, valueBytes);
                bytes += value.length;
                producer.send(new ProducerRecord<>(topic, SampleValues.key(n), value));
            }
            producer.flush();
        }
        return new Input(topic, records, valueBytes, (double) bytes / records);
    }

    /**
     * Creates an input topic for Avro values of about {@code valueBytes} ({@link AvroSampleValues}), registers
     * their schema under {@code <topic>-value} in the schema registry of the configuration, and writes
     * {@code records} values framed with its ID.
     */
    public Input loadAvro(long records, int valueBytes) {
        String topic = input + "-avro-" + valueBytes;
        createTopic(topic);
        Schema schema = AvroSampleValues.schema(valueBytes);
        int schemaId = HttpSchemaRegistry.of(base.schemaRegistry()).register(topic + "-value",
                new RegisteredSchema(RegisteredSchema.AVRO, schema.toString(), List.of()));
        avroInputs.put(topic, new AvroInput(schema, schemaId));
        Properties p = KafkaSettings.producer(base.connection());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        long bytes = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long n = 0; n < records; n++) {
                byte[] value = AvroSampleValues.value(n, schema, schemaId);
                bytes += value.length;
                producer.send(new ProducerRecord<>(topic, SampleValues.key(n), value));
            }
            producer.flush();
        }
        return new Input(topic, records, valueBytes, (double) bytes / records);
    }

    /**
     * Runs one topology over the whole input and reports its steady rate: output records per second
     * while the output grows from 10% to 90% of the input. That leaves out what is not throughput —
     * task start-up before the first record, and the wait for the last commit (up to a whole commit
     * interval: 1 s in the throughput profile, a fifth of a 1,000,000-record run). The run still
     * waits until every input record is committed, and {@code seconds} is that whole time.
     */
    public BenchResult throughput(String name, Topo topo, Settings settings, Input from, long records) {
        BenchRun run = newRun(topo, settings, Map.of("input.topic", from.topic()));
        HeapSampler heap = new HeapSampler();
        try (run; heap) {
            long started = run.startAndAwaitRunning();
            double steady = run.steadyRate(records);
            run.awaitCommitted(records);
            double seconds = (System.nanoTime() - started) / 1e9;
            return new BenchResult(name, records, seconds, steady, run.cpuMicrosPerRecord, run.brokerCpuMicrosPerRecord, -1, -1,
                    heap.peakMiB());
        } finally {
            deleteTopics(run.app);
        }
    }

    /**
     * Produces at a steady {@code rate} for {@code seconds} while the topology runs, and measures
     * produce-to-read_committed latency of the output records (the first second is warm-up).
     */
    public BenchResult latency(String name, Topo topo, Settings settings, int valueBytes, int rate, int seconds) {
        String latencyInput = input + "-latency-" + runs.incrementAndGet();
        createTopic(latencyInput);
        BenchRun run = newRun(topo, settings, Map.of("input.topic", latencyInput));
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
                    producer.send(new ProducerRecord<>(latencyInput, null, System.currentTimeMillis(), SampleValues.key(n),
                            SampleValues.value(n, valueBytes)));
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
        return new BenchResult(name, sorted.size(), seconds, rate, -1, -1, percentile(sorted, 0.50), percentile(sorted, 0.99),
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

    /** A run with a fresh application id, output and dead-letter topics, and state. */
    private BenchRun newRun(Topo topo, Settings settings, Map<String, String> overrides) {
        String app = "snowstamp-bench-" + ProcessHandle.current().pid() + "-" + runs.incrementAndGet();
        createTopic(app + "-out");
        createTopic(app + "-dlq");
        Map<String, String> raw = new HashMap<>(Map.of("application.id", app, "output.topic", app + "-out",
                "dlq.topic", app + "-dlq", "instance.id", "bench",
                "profile", settings == Settings.THROUGHPUT ? "throughput" : "default"));
        raw.putAll(overrides);
        if (topo == Topo.JSON || topo == Topo.JSON_COMPACT || topo == Topo.FORWARD_JSON) {
            raw.put("stamp.json-field", "id");
        }
        if (topo == Topo.HEADER_COMPACT || topo == Topo.JSON_COMPACT) {
            raw.put("stamp.header-format", "compact");
        }
        if (topo == Topo.HEADER_NO_PROVENANCE) {
            raw.put("stamp.provenance", "false");
        }
        if (topo.avro()) {
            raw.put("stamp.value-format", "avro");
        }
        return new BenchRun(configs.apply(raw), topo, settings, partitions, broker, avroInputs.get(raw.get("input.topic")));
    }

    /**
     * Deletes a finished run's topics (output, dead letters, changelog): at 4 KiB values every run writes
     * gigabytes, and a run of many cases and rounds would otherwise fill the broker's disk.
     */
    private void deleteTopics(String app) {
        try (Admin admin = Admin.create(KafkaSettings.client(base.connection()))) {
            List<String> mine = admin.listTopics().names().get(30, TimeUnit.SECONDS).stream()
                    .filter(t -> t.startsWith(app + "-")).toList();
            admin.deleteTopics(mine).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new SnowstampException("cannot delete the topics of bench application " + app + ": " + e.getMessage(), e);
        }
    }

    private void createTopic(String name) {
        try (Admin admin = Admin.create(KafkaSettings.client(base.connection()))) {
            TopicAdmin.apply(admin, List.of(new TopicSpec(name, partitions, (short) -1, Map.of())));
        }
    }
}
