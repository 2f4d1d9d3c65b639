package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.config.ConnectionSettings;
import io.snowstamp.config.SequenceSettings;
import io.snowstamp.config.StampSettings;
import io.snowstamp.lease.LeaseGuard;
import io.snowstamp.lease.LeaseMark;
import io.snowstamp.lease.Leases;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import io.snowstamp.state.IdHeader;
import io.snowstamp.json.JsonIdSplicer;
import io.snowstamp.ownership.PreCommitHooks;
import io.snowstamp.stream.StampedValue;
import io.snowstamp.ownership.WriteAcks;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * Numbers the records of every tag hashed to one repartition partition (Leaf-segment on a state store): a tag issues
 * {@code maxId + 1, maxId + 2, ...}, and before it issues a number above its reserved {@code maxId} it writes the next
 * segment — {@code step} numbers further — to the {@code sequence-segments} store (one changelog record per step, in
 * the same commit as the records).
 *
 * <p>Every entry records {@code issued}, the tag's last number when it was written: at each reservation, and at each
 * checkpoint for every tag that advanced since the previous one, written before the checkpoint. {@link #init} runs
 * after Kafka Streams restored the store; it reads the output partition ({@code read_uncommitted}, aborted records
 * included) from the offset the restored checkpoint covers to its end ({@link SequenceTail}), and raises each tag's
 * {@code issued} (and {@code maxId}) to the highest number found. Where {@link ResumeRule} allows it (exactly-once;
 * at-least-once after the previous holder's clean-close marker) each tag resumes right after {@code issued}, inside its
 * reserved segment: a record with a number above the restored {@code issued} was forwarded after the checkpoint's end
 * offset was taken, so if it reached the log before the scan, the scan saw it, and if it lands later it is aborted
 * (exactly-once) or was never issued (the marker records every number issued). Otherwise each tag resumes above its
 * {@code maxId}. Hence a clean stop, restart or rebalance leaves no gap; a crash or a lost lease skips the numbers of
 * the aborted transaction (exactly-once) or the rest of each tag's reserved segments (at-least-once, and at every start
 * with {@code recovery.tail-guard=false}), never a number the old holder may still send.
 * A punctuator moves the covered offset forward every {@code sequence.checkpoint-interval}, which bounds the next
 * start's read.
 *
 * <p>No number of a segment leaves the task before the changelog acknowledged the segment's reservation ({@link
 * SegmentAcks}), and the lease is checked again after that ({@link LeaseGuard#checkIssued}): a holder frozen or cut off
 * with a reservation unsent issues nothing from it, so every segment the old one can still number in lies before the
 * new owner's lease record: restored, or read by the lease reader and raised at the first number ({@link
 * LeaseStartRaises#raiseFromLease}) — after the restore, or hidden from it by an older holder's late write of the tag.
 * The next segment is reserved when half of the current one is used, so steady numbering does not wait (under
 * exactly-once the reservation and its numbers commit together: nothing waits).
 */
final class SequenceProcessor implements Processor<byte[], byte[], byte[], StampedValue> {
    private static final Logger log = LoggerFactory.getLogger(SequenceProcessor.class);
    private static final int LOGGED_RAISES = 10;

    private final ConnectionSettings connection;
    private final SequenceSettings settings;
    private final int partitions;
    private final LongSupplier clock;
    private final SequenceTail tail;
    private final JsonIdSplicer splicer;
    private final NumberFreezeHook freeze = NumberFreezeHook.fromSystemProperties();
    private final Map<String, TagCounter> counters = new HashMap<>();

    private ProcessorContext<byte[], StampedValue> context;
    private KeyValueStore<String, SequenceState> store;
    private SegmentStore segmentStore;
    private TagRegistry registry;
    private int partition;
    private PartitionCheckpoint checkpoint;
    /** The checkpoint's punctuation and the late writes' ({@link #settleLateWrites}); cancelled at close. */
    private final java.util.List<Cancellable> scheduled = new java.util.ArrayList<>();
    /** whether the tail was scanned at start */
    private boolean tailScanned;
    /** What the first number under the lease raises the tags above, and whether they resume inside their segments. */
    private LeaseStartRaises raises;
    private final boolean exactlyOnce;
    private long issued;
    private final Leases leases;
    /** Before every number: the task's lease on its partition is confirmed by the changelog (every mode). */
    private LeaseGuard lease = LeaseGuard.none();
    private long segments;
    /** Where the changelog's acknowledgements of this task's writes go ({@link WriteAcks#immediate()} under exactly-once). */
    private final WriteAcks writeAcks;
    private SegmentAcks acks;
    /** Exactly-once: a clean stop's last commit takes {@code issued} of each tag that advanced (null: the marker does). */
    private final PreCommitHooks atStop;
    /** {@code issued} for a clean stop's last commit (exactly-once; null otherwise). */
    private IssuedAtStop issuedAtStop;

    SequenceProcessor(SequenceSettings settings, StampSettings stamp, ConnectionSettings connection, int partitions, LongSupplier clock,
                      SequenceTail tail, Leases leases, WriteAcks writeAcks, PreCommitHooks atStop) {
        this.atStop = atStop;
        this.connection = connection;
        this.writeAcks = writeAcks;
        this.leases = leases;
        this.settings = settings;
        this.partitions = partitions;
        this.clock = clock;
        this.tail = tail;
        this.splicer = JsonIdSplicer.of(stamp);
        this.exactlyOnce = connection.processingGuarantee() == ConnectionSettings.Guarantee.EXACTLY_ONCE_V2;
    }

    @Override
    public void init(ProcessorContext<byte[], StampedValue> context) {
        // Streams may close() and init() the same instance after restoring: rebuild everything here
        this.context = context;
        this.issuedAtStop = atStop == null ? null : new IssuedAtStop(atStop, (interval, punctuator) -> context.schedule(interval,
                PunctuationType.WALL_CLOCK_TIME, punctuator), () -> counters.values().stream().anyMatch(TagCounter::advanced),
                // into the stop's last transaction, which fences a zombie: not held back by the lease
                () -> segmentStore.writeIssued(counters, clock.getAsLong(), () -> true));
        this.store = context.getStateStore(SequenceNames.STORE);
        this.registry = new TagRegistry(context.getStateStore(SequenceNames.TAGS_STORE));
        this.partition = context.taskId().partition();
        this.segmentStore = new SegmentStore(store, partition);
        counters.clear();
        issued = 0;
        segments = 0;
        checkpoint = null;
        lease.release();
        lease = LeaseGuard.none();
        acks = SegmentAcks.reopen(acks, writeAcks, partition);
        long now = clock.getAsLong();
        PartitionCheckpoint restored = segmentStore.restoredCheckpoint();
        if (restored.partitions() != 0 && restored.partitions() != partitions) {
            throw new PartitionsChangedException(partition, restored.partitions(), partitions);
        }
        String late = restored.closed() ? segmentStore.writtenByAnother(new LeaseMark(restored.epoch(), restored.holder()).writer()) : null;
        SequenceTail.Scan scan = tail.scan(partition, ResumeRule.scanFrom(restored, late, late == null ? 0 : segmentStore.segment(late).writer()));
        tailScanned = scan.endOffset() >= 0;
        TopicPartition changelog = new TopicPartition(SequenceNames.changelogTopic(context.applicationId()), partition);
        String rival = segmentStore.writtenByRival(restored.epoch(), new LeaseMark(restored.epoch(), restored.holder()).writer());
        boolean afterExactlyOnce = exactlyOnce && ResumeRule.afterExactlyOnce(restored, rival);
        PartitionCheckpoint leased = restored.withNewLease(io.snowstamp.lease.Holders.of(connection.instanceId()), now, partitions,
                leases.highestEpoch(changelog), afterExactlyOnce);
        segmentStore.writeUnder(new LeaseMark(leased.epoch(), leased.holder()).writer());
        Map<String, String> raised = new TreeMap<>();
        int advanced = segmentStore.raiseFromTail(scan, now, raised, LOGGED_RAISES, () -> true);   // before the lease record
        String resume = ResumeRule.whyAboveSegments(tailScanned, exactlyOnce, restored, leased, late, rival, scan);
        boolean resumeInside = resume == null;
        // inside by a clean-close marker (at-least-once, or exactly-once right after one): until a write shows after it
        raises = new LeaseStartRaises(partition, segmentStore, tail, clock, tailScanned, resumeInside,
                resumeInside && !afterExactlyOnce ? new LeaseMark(restored.epoch(), restored.holder()) : null);
        // the marker this holder may write at its close must not vouch for the numbers inside the segments it skips
        int skipped = resumeInside ? 0 : segmentStore.resumeAboveSegments(now, () -> true);
        checkpoint = leased;
        if (tailScanned) {
            checkpoint = checkpoint.withCoveredOffset(scan.endOffset(), now);
        }
        store.put(SequenceState.CHECKPOINT_KEY, checkpoint);
        // the lease straight to the changelog, where the previous owner reads it and stops (the first number waits out its
        // term, then reads the tail again: see process). Only the restored checkpoint with the new lease: outside the
        // transaction, a covered offset moved past the tail must never be visible without the tag writes of its commit
        lease = leases.take(context.taskId(), changelog, new LeaseMark(leased.epoch(), leased.holder()),
                Serdes.String().serializer().serialize(null, SequenceState.CHECKPOINT_KEY),
                new SequenceStateSerde().serialize(null, leased), "sequence partition " + partition, false);
        log.info("sequence partition {}: lease epoch {} taken by {} (previous holder {}, since {}); {}; raised by the tail: {}; {}",
                partition, checkpoint.epoch(), checkpoint.holder(), restored.holder().isEmpty() ? "none" : restored.holder(),
                restored.acquiredAt() == 0 ? "never" : Instant.ofEpochMilli(restored.acquiredAt()),
                segmentStore.describe(scan, restored), raised.isEmpty() ? "none" : raised,
                resumeInside ? "tags resume after their last number issued (" + advanced + " advanced by the tail)"
                        : "tags resume above their reserved segments (" + resume + "; " + skipped + " recorded as issued up to"
                                + " their segment's end)");
        scheduled.add(context.schedule(settings.checkpointInterval(), PunctuationType.WALL_CLOCK_TIME, ignored -> checkpoint()));
        scheduled.add(context.schedule(LateWrites.every(settings.checkpointInterval()), PunctuationType.WALL_CLOCK_TIME,
                ignored -> settleLateWrites()));
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        if (lease.check()) {
            if (raises.atFirstNumber(lease, checkpoint)) {
                counters.clear();
            }
            if (exactlyOnce && !checkpoint.exactlyOnce()) {     // every earlier holder's segment now below: with the raises
                lease.checkIssued();                            // they may have held the thread past the term
                checkpoint = checkpoint.coveringEarlierHolders();
                store.put(SequenceState.CHECKPOINT_KEY, checkpoint);
            }
        }
        LateWrites.rewrite(lease, raises.leaseRaised(), segmentStore, counters, clock, partition);
        String tag = new String(record.key(), StandardCharsets.UTF_8);
        Envelope envelope = Envelope.decode(record.value());
        JsonIdSplicer.Plan plan = splicer == null ? null : splicer.inspect(envelope.value());
        TagCounter counter = counters.get(tag);
        if (counter == null) {
            counter = open(tag);
            counters.put(tag, counter);
        }
        boolean opened = counter.last >= counter.end;
        if (opened) {
            reserve(tag, counter, envelope.definition(), false);
        }
        long number = ++counter.last;
        freeze.taken(partition, tag, number, opened);
        if (number > counter.acked) {
            counter.acked = acks.await(tag, number, lease);
        }
        lease.checkIssued();
        issued++;
        if (counter.written.step() > 0 && counter.end - counter.last < (counter.written.step() + 1) / 2) {
            reserve(tag, counter, envelope.definition(), true);
        }
        freeze.beforeForward(partition, tag, number, opened);
        record.headers().add(IdHeader.TAG, record.key());
        byte[] digits = IdHeader.ascii(number);
        record.headers().add(IdHeader.ID, digits);
        byte[] value = plan == null ? envelope.value() : splicer.write(envelope.value(), plan, digits);
        context.forward(new Record<>(envelope.key(), new StampedValue(partition, value), record.timestamp(), record.headers()));
        issuedForTheStop(tag, counter);
    }

    /** Exactly-once: what a clean stop's last commit must name ({@link #atStop}). */
    private void issuedForTheStop(String tag, TagCounter counter) {
        if (issuedAtStop == null) {
            return;
        }
        if (issuedAtStop.stopping()) {
            // numbered after the thread wrote its tasks' issued for the stop: this tag's, into the last commit (the other
            // tags were written then; one tag, not all, per record: a stop drains what the thread had fetched)
            counter.written = segmentStore.put(tag, counter.written.withIssued(counter.last, clock.getAsLong()));
        } else {
            issuedAtStop.advanced();
        }
    }

    /** A counter for a tag first seen since the task started ({@link TagCounter#open}). */
    private TagCounter open(String tag) {
        TagSegment stored = segmentStore.segment(tag);
        TagCounter counter = TagCounter.open(stored, raises.resumeInside());
        if (stored != null && !acks.opened(tag, stored.maxId(), counter.last < counter.end, lease)) {
            // one the changelog may never have taken (SegmentAcks#opened): written again, its numbers wait for that write
            lease.checkIssued();    // right before it, as in reserve: the writes before it (LateWrites) can outlast the term
            counter.written = segmentStore.put(tag, stored);
            counter.acked = counter.last;
        }
        return counter;
    }

    /**
     * Writes the next segment of {@code tag} to the store — before any number in it is issued — with the step of the
     * newest definition: the registered one or the one the record was routed with. No number in it leaves the task
     * before the write's acknowledgement ({@link SegmentAcks#await}).
     *
     * @param ahead the current segment is half used, not used up: the next one follows it, so its first number rarely
     *              waits (nothing when the definition's start lies above it: that segment is reserved when the current
     *              one is used up)
     */
    private void reserve(String tag, TagCounter counter, TagDefinition routedWith, boolean ahead) {
        if (counter.end == Long.MAX_VALUE) {
            if (ahead) {
                return;
            }
            throw new SequenceExhaustedException(tag);
        }
        TagDefinition definition = TagDefinition.newer(registry.get(tag), routedWith);
        if (definition == null) {
            definition = TagDefinition.defaults(settings);
        }
        long first = Math.max(counter.end + 1, definition.start());
        if (ahead && first > counter.end + 1) {
            return;
        }
        long last = first > Long.MAX_VALUE - definition.step() + 1 ? Long.MAX_VALUE : first + definition.step() - 1;
        if (!ahead) {
            counter.last = first - 1;
        }
        // the lease again, right before the write: what ran since this record's check (the tail read at the first number,
        // a wait for an acknowledgement) can outlast the term, and a reservation sent then may land after the next owner's
        // lease record, the newest value of its tag (its number would be dropped anyway: checkIssued)
        lease.checkIssued();
        counter.written = segmentStore.put(tag, new TagSegment(last, counter.last, first, definition.step(), definition.revision(),
                clock.getAsLong()));
        acks.written(tag, last);
        counter.end = last;
        segments++;
    }

    /**
     * Records that the output partition up to its current end is covered by the store: every record there was written
     * after its segment was written to the store ({@code maxId} at or above its number) and forwarded before now
     * ({@code issued}, written here, at or above it); the checkpoint is written after both, to the same changelog
     * partition — so a restored checkpoint implies the entries before it were restored too.
     */
    private void checkpoint() {
        if (!settleLateWrites() || !tailScanned || (lease.reads() && !raises.tailReadAgain())) {
            return;
        }
        long end;
        try {
            end = tail.endOffset(partition);
        } catch (SnowstampException e) {
            log.warn("sequence partition {}: no checkpoint this time: {}", partition, e.getMessage());
            return;
        }
        // below the covered offset too: the topic created again (or its log truncated) while this holder ran. Again: the
        // read of the end may have taken long; and again before every write (SegmentStore#writeIssued)
        if (end != checkpoint.coveredOffset() && lease.mayWrite()) {
            long now = clock.getAsLong();
            if (segmentStore.writeIssued(counters, now, lease::mayWrite) && lease.mayWrite()) {
                checkpoint = checkpoint.withCoveredOffset(end, now);
                store.put(SequenceState.CHECKPOINT_KEY, checkpoint);
            }
        }
    }

    /** {@link LateWrites#settle}: false where this task may not write. */
    private boolean settleLateWrites() {
        return LateWrites.settle(lease, raises, checkpoint, segmentStore, counters, clock, partition);
    }

    /**
     * Kafka Streams closes the processor after the task's last commit, or without one (dirty close); no number is
     * issued after this. Under at-least-once, while the lease holds, it writes the clean-close marker: {@code issued}
     * of every tag that advanced, then the checkpoint marked closed, to one changelog partition through one producer —
     * so a restored marker implies those entries were restored too ({@link ResumeRule}); and, for a holder closed
     * before its first number, the raise of every segment another holder reserved between its restore and its lease
     * record ({@link LeaseStartRaises#raiseFromLease}), which is why no marker is written before that lease record was
     * read back. A dirty close may write it too: it records what was issued, not what reached the log. Under
     * exactly-once nothing is written: the last commit is over, and a write would open a transaction that holds back
     * every read_committed reader of the changelog until it ends.
     */
    @Override
    public void close() {
        if (issuedAtStop != null) {
            issuedAtStop.close();
        }
        scheduled.forEach(Cancellable::cancel);
        scheduled.clear();
        boolean marked = !exactlyOnce && checkpoint != null && lease != LeaseGuard.none() && lease.mayWrite() && markClosed();
        lease.release();
        lease = LeaseGuard.none();
        if (acks != null) {
            acks.close();
        }
        if (checkpoint != null) {
            log.info("sequence partition {}: task closed after lease epoch {}; {} numbers issued for {} tags, {} segments reserved,"
                    + " {} numbers waited {} ms in all for their segment's acknowledgement{}",
                    partition, checkpoint.epoch(), issued, counters.size(), segments, acks.waits(),
                    java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(acks.waitedNanos()),
                    exactlyOnce ? "" : marked ? "; clean-close marker written" : "; no clean-close marker");
        }
    }

    private boolean markClosed() {
        try {
            // a logged store's put takes the changelog record's timestamp from the record context, which Kafka Streams sets
            // around init and punctuations but not around close: a task closed before its first record has none
            if (context instanceof InternalProcessorContext<?, ?> internal && internal.recordContext() == null) {
                internal.setRecordContext(new ProcessorRecordContext(clock.getAsLong(), -1L, -1, null, new RecordHeaders()));
            }
            if (!lease.readBack()) {
                // what another holder reserved between this task's restore and its lease record is known only once that
                // record was read back: a marker now could vouch for numbers of such a segment
                log.info("sequence partition {}: no clean-close marker: the lease record of epoch {} was not read back yet;"
                        + " the next holder resumes above the reserved segments", partition, checkpoint.epoch());
                return false;
            }
            java.util.Set<String> written = counters.entrySet().stream().filter(entry -> entry.getValue().advanced())
                    .map(Map.Entry::getKey).collect(java.util.stream.Collectors.toSet());
            SegmentStore.WriteGate gate = new SegmentStore.WriteGate(lease::mayWrite);     // once it says no: no marker
            if (!segmentStore.writeIssued(counters, clock.getAsLong(), gate)) {
                return false;
            }
            boolean changed = raises.distrustALateMarker(lease, checkpoint, gate);
            // closed before its first number (or before the raises ran): a segment another holder reserved after the
            // restore, before this lease record, is not in the store; the marker must vouch for none of its numbers
            if (raises.raiseFromLease(lease, checkpoint, gate) || changed) {
                counters.clear();
            }
            segmentStore.rewriteAll(clock.getAsLong(), written, gate);
            if (!gate.getAsBoolean()) {
                return false;       // the writes above took long: a marker now could land after the next owner's lease
            }
            checkpoint = checkpoint.closedCleanly();
            store.put(SequenceState.CHECKPOINT_KEY, checkpoint);
            return true;
        } catch (RuntimeException e) {
            log.info("sequence partition {}: the clean-close marker could not be written ({}); the next holder resumes above"
                    + " the reserved segments", partition, e.getMessage());
            return false;
        }
    }
}
