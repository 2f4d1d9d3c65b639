package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.SequenceSettings;
import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.stream.JsonIdSplicer;
import io.snowstamp.stream.Names;
import io.snowstamp.stream.StampedValue;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * Numbers the records of every tag hashed to one repartition partition (Leaf-segment on a state
 * store): a tag issues {@code maxId + 1, maxId + 2, ...}, and before it issues a number above its
 * reserved {@code maxId} it writes the next segment — {@code step} numbers further — to the
 * {@code sequence-segments} store (one changelog record per step, in the same commit as the records).
 *
 * <p>{@link #init} runs after Kafka Streams restored the store. It reads the output partition from
 * the offset the restored checkpoint covers to its end ({@link SequenceTail}), raises each tag found
 * there to at least its highest number, and records the new covered offset. No tag resumes inside a
 * segment reserved before the start: the first record of each tag reserves a new segment above
 * everything known, so a restart, a rebalance or a crash leaves at most the rest of one segment per
 * tag unused, and never issues a number twice. A punctuator moves the covered offset forward every
 * {@code sequence.checkpoint-interval}, which bounds the next start's read.
 *
 * <p>No double buffer: Leaf loads the next segment ahead because its database round trip blocks;
 * here a reservation is a store write that Kafka sends with the records, so nothing waits for it.
 */
final class SequenceProcessor implements Processor<byte[], byte[], byte[], StampedValue> {
    private static final Logger log = LoggerFactory.getLogger(SequenceProcessor.class);
    private static final int LOGGED_RAISES = 10;

    private final SnowstampConfig config;
    private final SequenceSettings settings;
    private final int partitions;
    private final LongSupplier clock;
    private final SequenceTail tail;
    private final JsonIdSplicer splicer;
    private final Map<String, Counter> counters = new HashMap<>();

    private ProcessorContext<byte[], StampedValue> context;
    private KeyValueStore<String, SequenceState> store;
    private TagRegistry registry;
    private int partition;
    private PartitionCheckpoint checkpoint;
    private Cancellable checkpointer;
    private long issued;
    private long segments;

    /** The numbers one tag may issue without another write: {@code last + 1 .. end}. */
    private static final class Counter {
        /** the last number issued, or the one before the first of the segment */
        long last;
        /** the end of the reserved segment (inclusive); {@code last == end}: reserve before issuing */
        long end;
    }

    SequenceProcessor(SnowstampConfig config, int partitions, LongSupplier clock, SequenceTail tail) {
        this.config = config;
        this.settings = config.sequence();
        this.partitions = partitions;
        this.clock = clock;
        this.tail = tail;
        this.splicer = config.jsonField() == null ? null
                : new JsonIdSplicer(config.jsonField(), config.jsonType(), config.onExistingField(), config.maxDepth());
    }

    @Override
    public void init(ProcessorContext<byte[], StampedValue> context) {
        // Streams may close() and init() the same instance after restoring: rebuild everything here
        this.context = context;
        this.store = context.getStateStore(SequenceNames.STORE);
        this.registry = new TagRegistry(context.getStateStore(SequenceNames.TAGS_STORE));
        this.partition = context.taskId().partition();
        counters.clear();
        issued = 0;
        segments = 0;
        long now = clock.getAsLong();
        PartitionCheckpoint restored = restoredCheckpoint();
        if (restored.partitions() != 0 && restored.partitions() != partitions) {
            throw new PartitionsChangedException(partition, restored.partitions(), partitions);
        }
        SequenceTail.Scan scan = tail.scan(partition, restored.coveredOffset());
        Map<String, String> raised = raiseFromTail(scan, now);
        checkpoint = restored.withNewLease(holder(), now, partitions);
        if (scan.endOffset() >= 0) {
            checkpoint = checkpoint.withCoveredOffset(scan.endOffset(), now);
        }
        store.put(SequenceState.CHECKPOINT_KEY, checkpoint);
        log.info("sequence partition {}: lease epoch {} taken by {} (previous holder {}, since {}); {}; raised by the tail: {}",
                partition, checkpoint.epoch(), checkpoint.holder(), restored.holder().isEmpty() ? "none" : restored.holder(),
                restored.acquiredAt() == 0 ? "never" : Instant.ofEpochMilli(restored.acquiredAt()),
                describe(scan, restored), raised.isEmpty() ? "none" : raised);
        if (scan.endOffset() >= 0) {
            checkpointer = context.schedule(settings.checkpointInterval(), PunctuationType.WALL_CLOCK_TIME, ignored -> checkpoint());
        }
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        String tag = new String(record.key(), StandardCharsets.UTF_8);
        Envelope envelope = Envelope.decode(record.value());
        JsonIdSplicer.Plan plan = splicer == null ? null : splicer.inspect(envelope.value());
        Counter counter = counters.get(tag);
        if (counter == null) {
            counter = open(tag);
            counters.put(tag, counter);
        }
        if (counter.last >= counter.end) {
            reserve(tag, counter, envelope.definition());
        }
        long number = ++counter.last;
        issued++;
        record.headers().add(SequenceNames.TAG_HEADER, record.key());
        record.headers().add(Names.ID_HEADER, Long.toString(number).getBytes(StandardCharsets.US_ASCII));
        byte[] value = plan == null ? envelope.value() : splicer.write(envelope.value(), plan, number);
        context.forward(new Record<>(envelope.key(), new StampedValue(partition, value), record.timestamp(), record.headers()));
    }

    /** A counter for a tag first seen since the task started: nothing reserved yet, resume above the stored maxId. */
    private Counter open(String tag) {
        Counter counter = new Counter();
        TagSegment stored = segment(tag);
        counter.end = stored == null ? -1 : stored.maxId();
        counter.last = counter.end;             // nothing left: the first record reserves a new segment
        return counter;
    }

    /**
     * Writes the next segment of {@code tag} to the store — before any number in it is issued — with
     * the step of the newest definition: the registered one or the one the record was routed with.
     */
    private void reserve(String tag, Counter counter, TagDefinition routedWith) {
        if (counter.end == Long.MAX_VALUE) {
            throw new SequenceExhaustedException(tag);
        }
        TagDefinition definition = TagDefinition.newer(registry.get(tag), routedWith);
        if (definition == null) {
            definition = TagDefinition.defaults(settings);
        }
        long first = Math.max(counter.end + 1, definition.start());
        long last = first > Long.MAX_VALUE - definition.step() + 1 ? Long.MAX_VALUE : first + definition.step() - 1;
        store.put(tag, new TagSegment(last, first, definition.step(), definition.revision(), clock.getAsLong()));
        counter.last = first - 1;
        counter.end = last;
        segments++;
    }

    /**
     * Makes the store cover every tag found in the scanned tail: a tag's maxId is raised to its
     * highest number there (a number the store may not know: at-least-once, a lost or reset
     * changelog, a new application id, an anomaly of the transaction protocol).
     *
     * @return per raised tag, "old -> new", the first few only
     */
    private Map<String, String> raiseFromTail(SequenceTail.Scan scan, long now) {
        Map<String, String> raised = new TreeMap<>();
        List<String> tags = new ArrayList<>(scan.highest().keySet());
        tags.sort(null);
        for (String tag : tags) {
            long highest = scan.highest().get(tag);
            TagSegment stored = segment(tag);
            if (stored == null || stored.maxId() < highest) {
                // segmentStart -1, step 0: this maxId was found, not reserved
                store.put(tag, new TagSegment(highest, -1, 0, stored == null ? 0 : stored.revision(), now));
                if (raised.size() < LOGGED_RAISES) {
                    raised.put(tag, (stored == null ? "none" : Long.toString(stored.maxId())) + " -> " + highest);
                }
            }
        }
        return raised;
    }

    /**
     * Records that the output partition up to its current end is covered by the store: every
     * record there was written after its segment was written to the store, and the checkpoint is
     * written after both, to the same changelog partition — so a restored checkpoint implies the
     * segments before it were restored too.
     */
    private void checkpoint() {
        long end;
        try {
            end = tail.endOffset(partition);
        } catch (SnowstampException e) {
            log.warn("sequence partition {}: no checkpoint this time: {}", partition, e.getMessage());
            return;
        }
        if (end > checkpoint.coveredOffset()) {
            checkpoint = checkpoint.withCoveredOffset(end, clock.getAsLong());
            store.put(SequenceState.CHECKPOINT_KEY, checkpoint);
        }
    }

    private TagSegment segment(String tag) {
        SequenceState state = store.get(tag);
        if (state == null || state instanceof TagSegment) {
            return (TagSegment) state;
        }
        throw new SnowstampException("sequence partition " + partition + ": the state of tag '" + tag + "' is a " + state
                + ", not a tag segment");
    }

    private PartitionCheckpoint restoredCheckpoint() {
        SequenceState state = store.get(SequenceState.CHECKPOINT_KEY);
        if (state == null) {
            return PartitionCheckpoint.NONE;
        }
        if (state instanceof PartitionCheckpoint stored) {
            return stored;
        }
        throw new SnowstampException("sequence partition " + partition + ": the checkpoint entry holds " + state);
    }

    private String describe(SequenceTail.Scan scan, PartitionCheckpoint restored) {
        long tags;
        try (var all = store.all()) {
            tags = 0;
            while (all.hasNext()) {
                if (!all.next().key.equals(SequenceState.CHECKPOINT_KEY)) {
                    tags++;
                }
            }
        }
        String read = scan.endOffset() < 0 ? "tail scan off (recovery.tail-guard=false)"
                : "tail: " + scan.scanned() + " records at offsets " + scan.fromOffset() + ".." + scan.endOffset() + " in "
                + scan.millis() + " ms, " + scan.highest().size() + " tags, from "
                + (restored.coveredOffset() < 0 ? "the start of the partition (no checkpoint)" : "checkpoint " + restored.coveredOffset());
        return tags + " tags in state; " + read;
    }

    private String holder() {
        return config.instanceId() + "/" + Thread.currentThread().getName();
    }

    @Override
    public void close() {
        if (checkpointer != null) {
            checkpointer.cancel();
            checkpointer = null;
        }
        if (checkpoint != null) {
            log.info("sequence partition {}: task closed after lease epoch {}; {} numbers issued for {} tags, {} segments reserved",
                    partition, checkpoint.epoch(), issued, counters.size(), segments);
        }
    }
}
