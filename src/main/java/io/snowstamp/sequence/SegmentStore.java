package io.snowstamp.sequence;

import io.snowstamp.SnowstampException;
import io.snowstamp.sequence.SequenceState.PartitionCheckpoint;
import io.snowstamp.sequence.SequenceState.TagSegment;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What one sequence task's {@code sequence-segments} store holds, read the way {@link SequenceProcessor} needs it: a
 * tag's segment, the partition's checkpoint, and the tags a scanned output tail raises. Used by the task's stream thread.
 */
final class SegmentStore {
    private final KeyValueStore<String, SequenceState> store;
    private final int partition;
    /** Who this task's tag writes name ({@link io.snowstamp.lease.LeaseMark#writer}; set with the new lease, before any write). */
    private long writer;

    SegmentStore(KeyValueStore<String, SequenceState> store, int partition) {
        this.store = store;
        this.partition = partition;
    }

    /**
     * Asked right before each write of a step that writes many keys ({@link #writeIssued}, {@link #raise},
     * {@link #resumeAboveSegments}, {@link #rewriteAll}): a put hands its record to the producer, whose send can hold the
     * thread (buffer full, no metadata: up to {@code max.block.ms}), so one check before many writes lets the later ones
     * go out after the lease was seen lost or its term ran out — lower writes that land after the next owner's lease
     * record, as their keys' newest values. Once it said no it says no for the rest of the step, even if a confirmation
     * came meanwhile: the caller learns the step stopped partway ({@link #stopped}) and does not act as if it was whole.
     */
    static final class WriteGate implements BooleanSupplier {
        private final BooleanSupplier mayWrite;
        private boolean stopped;

        WriteGate(BooleanSupplier mayWrite) {
            this.mayWrite = mayWrite;
        }

        /** A gate for the record path, where a step stopped partway must not be followed by a number: it throws instead. */
        static WriteGate orStop(io.snowstamp.lease.LeaseGuard lease) {
            return new WriteGate(() -> {
                lease.checkIssued();
                return true;
            });
        }

        @Override
        public boolean getAsBoolean() {
            stopped = stopped || !mayWrite.getAsBoolean();
            return !stopped;
        }

        /** Whether it said no: the step left writes out. */
        boolean stopped() {
            return stopped;
        }
    }

    /** From now on, every tag write names {@code writer}. */
    void writeUnder(long writer) {
        this.writer = writer;
    }

    /** Writes the tag's segment as this task's; returns what was written. */
    TagSegment put(String tag, TagSegment segment) {
        TagSegment written = segment.writtenUnder(writer);
        store.put(tag, written);
        return written;
    }

    /**
     * Writes {@code issued} of every tag that advanced since its entry was last written (before a checkpoint: every
     * record below the end offset it covers was forwarded before, so its number is at most its tag's {@code issued}).
     * Each write only while {@code mayWrite} ({@link WriteGate}).
     *
     * @return false when it stopped for {@code mayWrite}: nothing may follow (no checkpoint, no marker)
     */
    boolean writeIssued(Map<String, TagCounter> counters, long now, BooleanSupplier mayWrite) {
        for (Map.Entry<String, TagCounter> entry : counters.entrySet()) {
            TagCounter counter = entry.getValue();
            if (counter.advanced()) {
                if (!mayWrite.getAsBoolean()) {
                    return false;
                }
                counter.written = put(entry.getKey(), counter.written.withIssued(counter.last, now));
            }
        }
        return true;
    }

    /**
     * A tag whose restored record another holder than {@code writer} wrote (null: none). Behind that holder's clean-close
     * marker, which follows its write of every tag, such a record is a write that landed late.
     */
    String writtenByAnother(long writer) {
        try (var all = store.all()) {
            while (all.hasNext()) {
                var entry = all.next();
                if (entry.value instanceof TagSegment segment && segment.writer() != writer) {
                    return entry.key;
                }
            }
        }
        return null;
    }

    /**
     * A tag whose restored record another holder than {@code writer} wrote under lease {@code epoch} or a later one (null:
     * none): a holder that took the same epoch (the checkpoint restored is a loser's lease record) or a later one.
     */
    String writtenByRival(long epoch, long writer) {
        try (var all = store.all()) {
            while (all.hasNext()) {
                var entry = all.next();
                if (entry.value instanceof TagSegment segment && segment.writer() != writer && segment.writer() >>> 32 >= epoch
                        && segment.writer() != 0) {
                    return entry.key;
                }
            }
        }
        return null;
    }

    /** The tag's segment, null when the store has none. */
    TagSegment segment(String tag) {
        SequenceState state = store.get(tag);
        if (state == null || state instanceof TagSegment) {
            return (TagSegment) state;
        }
        throw new SnowstampException("sequence partition " + partition + ": the state of tag '" + tag + "' is a " + state
                + ", not a tag segment");
    }

    /** The checkpoint restored for the partition ({@link PartitionCheckpoint#NONE} when none). */
    PartitionCheckpoint restoredCheckpoint() {
        SequenceState state = store.get(SequenceState.CHECKPOINT_KEY);
        if (state == null) {
            return PartitionCheckpoint.NONE;
        }
        if (state instanceof PartitionCheckpoint stored) {
            return stored;
        }
        throw new SnowstampException("sequence partition " + partition + ": the checkpoint entry holds " + state);
    }

    /**
     * Makes the store cover every tag found in the scanned tail, before the checkpoint moves past it:
     * a tag's {@code issued} is raised to its highest number there (records forwarded after the
     * restored checkpoint: a clean stop's last commits, or a crash's aborted transaction), and its
     * {@code maxId} too when the store does not know that number at all (at-least-once, a lost or
     * reset changelog, a new application id, an anomaly of the transaction protocol).
     *
     * @param raised receives, per tag whose maxId was raised, "old -> new", the first {@code logged} only
     * @return how many tags the tail advanced
     */
    int raiseFromTail(SequenceTail.Scan scan, long now, Map<String, String> raised, int logged, BooleanSupplier mayWrite) {
        return raise(scan.highest(), now, raised, logged, mayWrite);
    }

    /**
     * Makes the store cover, per tag, a number that may have been issued: its {@code issued} is raised to it, and its
     * {@code maxId} too when the store does not know that number at all. For the numbers found in the output tail
     * ({@link #raiseFromTail}), and for the segments another writer reserved before this task's lease record that the
     * restored state does not hold (the lease reader's read, {@link io.snowstamp.lease.LeaseGuard#coveredCounters}): a
     * previous owner may number in those, and their records may still be on their way.
     *
     * @param highest  per tag, the number
     * @param mayWrite asked before each write; it stops at the first no ({@link WriteGate})
     * @return how many tags advanced
     */
    int raise(Map<String, Long> highest, long now, Map<String, String> raised, int logged, BooleanSupplier mayWrite) {
        List<String> tags = new ArrayList<>(highest.keySet());
        tags.sort(null);
        int advanced = 0;
        for (String tag : tags) {
            long number = highest.get(tag);
            TagSegment stored = segment(tag);
            boolean raises = stored == null || stored.maxId() < number;
            if ((raises || stored.issued() < number) && !mayWrite.getAsBoolean()) {
                break;
            }
            if (raises) {
                // segmentStart -1, step 0: this maxId was found, not reserved
                put(tag, new TagSegment(number, number, -1, 0, stored == null ? 0 : stored.revision(), now));
                if (raised.size() < logged) {
                    raised.put(tag, (stored == null ? "none" : Long.toString(stored.maxId())) + " -> " + number);
                }
            } else if (stored.issued() < number) {
                put(tag, stored.withIssued(number, now));
            } else {
                continue;
            }
            advanced++;
        }
        return advanced;
    }

    /**
     * Records the resume above the reserved segments that a start without the previous holder's clean-close marker
     * makes: {@code issued} becomes {@code maxId} for every tag, so that this holder's own marker, trusted by the next
     * one, vouches for no number the unclean predecessor may still send — also for the tags this holder never numbers.
     *
     * @param mayWrite asked before each write; it stops at the first no ({@link WriteGate})
     * @return how many tags were written
     */
    int resumeAboveSegments(long now, BooleanSupplier mayWrite) {
        return writeAgain((tag, segment) -> segment.issued() < segment.maxId(), TagSegment::maxId, now, mayWrite);
    }

    /**
     * Writes every tag's segment again as the store holds it, before the clean-close marker: a write of another holder
     * that landed after this task's restore (a zombie's reservation or checkpoint, sent before it saw a newer lease) would
     * otherwise be the tag's newest value in the log, behind the marker, with an {@code issued} below numbers that holder
     * forwarded; the next holder restores the newest value and trusts the marker.
     *
     * @param written  the tags written just now (their {@code issued}): not again
     * @param mayWrite asked before each write; it stops at the first no ({@link WriteGate}), and then no marker may follow
     * @return how many tags were written
     */
    int rewriteAll(long now, java.util.Set<String> written, BooleanSupplier mayWrite) {
        return writeAgain((tag, segment) -> !written.contains(tag), TagSegment::issued, now, mayWrite);
    }

    /**
     * Writes each tag segment of the store that {@code which} picks again, with {@code issued} from {@code issued}, each
     * write only while {@code mayWrite}; how many were written.
     */
    private int writeAgain(java.util.function.BiPredicate<String, TagSegment> which,
                           java.util.function.ToLongFunction<TagSegment> issued, long now, BooleanSupplier mayWrite) {
        List<Map.Entry<String, TagSegment>> tags = new ArrayList<>();
        try (var all = store.all()) {
            while (all.hasNext()) {
                var entry = all.next();
                if (entry.value instanceof TagSegment segment && which.test(entry.key, segment)) {
                    tags.add(Map.entry(entry.key, segment));
                }
            }
        }
        int rewritten = 0;
        for (Map.Entry<String, TagSegment> entry : tags) {
            if (!mayWrite.getAsBoolean()) {
                break;
            }
            put(entry.getKey(), entry.getValue().withIssued(issued.applyAsLong(entry.getValue()), now));
            rewritten++;
        }
        return rewritten;
    }

    /** One line: the tags in the store, and what the tail scan read. */
    String describe(SequenceTail.Scan scan, PartitionCheckpoint restored) {
        long tags = 0;
        try (var all = store.all()) {
            while (all.hasNext()) {
                if (!all.next().key.equals(SequenceState.CHECKPOINT_KEY)) {
                    tags++;
                }
            }
        }
        String read = scan.endOffset() < 0 ? "tail scan off (recovery.tail-guard=false)"
                : "tail: " + scan.scanned() + " records at offsets " + scan.fromOffset() + ".." + scan.endOffset() + " in "
                + scan.millis() + " ms, " + scan.highest().size() + " tags, from "
                + (restored.coveredOffset() < 0 ? "the start of the partition (no checkpoint)"
                : scan.fromOffset() < restored.coveredOffset() ? "the start of the partition (a late write behind the marker)"
                : "checkpoint " + restored.coveredOffset())
                + (scan.fromOffset() > Math.max(0, restored.coveredOffset()) ? ", the records before " + scan.fromOffset() + " deleted" : "");
        return tags + " tags in state; " + read;
    }
}
