package io.snowstamp.stream;

import io.snowstamp.config.ConfigException;
import io.snowstamp.config.Keys;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.IdGenerator;
import io.snowstamp.id.IdLayout;
import io.snowstamp.state.WorkerState;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * Stamps each record of one input partition with the next ID of that partition's generator.
 *
 * <p>{@link #init} runs after Kafka Streams has restored {@code worker-state} from its changelog
 * (also after a crash wiped local state), so the generator resumes above everything the restored
 * state says was issued, and above the wall clock. Every ID is recorded in the state before the
 * record is forwarded; both commit together.
 */
final class StampProcessor implements Processor<byte[], byte[], byte[], StampedValue> {
    private static final Logger log = LoggerFactory.getLogger(StampProcessor.class);

    private final SnowstampConfig config;
    private final LongSupplier clock;
    private final JsonIdSplicer splicer;

    private ProcessorContext<byte[], StampedValue> context;
    private KeyValueStore<Integer, WorkerState> store;
    private int partition;
    private IdGenerator generator;
    private WorkerState state;

    StampProcessor(SnowstampConfig config, LongSupplier clock) {
        this.config = config;
        this.clock = clock;
        this.splicer = config.jsonField() == null ? null
                : new JsonIdSplicer(config.jsonField(), config.jsonType(), config.onExistingField());
    }

    @Override
    public void init(ProcessorContext<byte[], StampedValue> context) {
        // Streams may close() and init() the same instance after restoring: rebuild everything here
        this.context = context;
        this.store = context.getStateStore(Names.STORE);
        this.partition = context.taskId().partition();
        long worker = workerForPartition();
        WorkerState restored = restoredState(worker);
        this.generator = new IdGenerator(config.layout(), config.datacenterId(), worker, clock);
        generator.resumeAbove(restored.highWaterMark());
        this.state = restored.withNewLease(holder(), clock.getAsLong());
        store.put(partition, state);
        logResumeDecision(restored);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        JsonIdSplicer.Plan plan = splicer == null ? null : splicer.inspect(record.value());
        long id = generator.next();
        addHeaders(record.headers(), id);
        byte[] value = plan == null ? record.value() : splicer.write(record.value(), plan, id);
        context.forward(record.withValue(new StampedValue(partition, value)));
        state = state.withLastId(id);
        store.put(partition, state);
    }

    private long workerForPartition() {
        long worker = config.workerFor(partition);
        IdLayout layout = config.layout();
        if (worker > layout.maxWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, config.workerOffset(),
                    "a value that leaves room for partition " + partition + ": worker = offset + partition must be <= "
                            + layout.maxWorker() + " with " + layout.workerBits() + " worker bits");
        }
        return worker;
    }

    private WorkerState restoredState(long worker) {
        String fingerprint = config.layout().fingerprint();
        WorkerState stored = store.get(partition);
        if (stored == null) {
            return WorkerState.initial(fingerprint, worker);
        }
        if (!stored.layoutFingerprint().equals(fingerprint)) {
            throw new LayoutChangedException(partition, stored.layoutFingerprint(), fingerprint);
        }
        if (stored.workerId() != worker) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, config.workerOffset(), "the offset the state of partition "
                    + partition + " was written with (worker " + stored.workerId() + ", now " + worker
                    + "): a changed worker ID could repeat another partition's IDs");
        }
        return stored;
    }

    private void addHeaders(Headers headers, long id) {
        headers.add(Names.ID_HEADER, Long.toString(id).getBytes(StandardCharsets.US_ASCII));
        if (config.provenance()) {
            RecordMetadata source = context.recordMetadata().orElseThrow();
            String src = source.topic() + "/" + source.partition() + "/" + source.offset();
            headers.add(Names.SOURCE_HEADER, src.getBytes(StandardCharsets.UTF_8));
        }
    }

    private String holder() {
        return config.instanceId() + "/" + Thread.currentThread().getName();
    }

    private void logResumeDecision(WorkerState restored) {
        long now = clock.getAsLong();
        String resume = generator.lastTime() < 0 ? "the clock (no ID issued before)"
                : "ID " + generator.lastId() + " (" + Instant.ofEpochMilli(config.layout().toWallMillis(generator.lastTime())) + ")";
        log.info("partition {} worker {}: lease epoch {} taken by {}; restored lastId={} reservedUntil={}; clock={}; resuming above {}",
                partition, state.workerId(), state.epoch(), state.holder(), restored.lastId(), restored.reservedUntil(),
                Instant.ofEpochMilli(now), resume);
    }
}
