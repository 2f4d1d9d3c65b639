package io.snowstamp.stream;

import io.snowstamp.BadRecordException;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The records of a task set aside, in input order, and their way out: while the task's next ID would wait (a takeover, a
 * lease confirmation, a reservation not yet read back), a schema lookup or the read of what is already stamped runs, or
 * the lead is exceeded under {@code id.on-excess-lead=pause}. They live in the logged {@code pending-records} store with
 * the input offsets, so a crash loses none, and the task's stream thread meanwhile stamps its other tasks; a 10 ms
 * punctuation stamps them in order once nothing holds them. One per task incarnation, on its stream thread; separate from
 * {@link StampProcessor} because the way out is a path of its own, which asks the processor for each ID.
 */
final class SetAside {
    /** The processor's logger: operators follow one logger for a task's story. */
    private static final Logger log = LoggerFactory.getLogger(StampProcessor.class);
    private static final int DRAIN_BATCH = 10_000;
    /** How often a task with records set aside tries to stamp them: a wait's end delays them by at most this. */
    private static final Duration DRAIN_EVERY = Duration.ofMillis(10);

    /** What the way out asks of the task that stamps. */
    interface Stamping {
        /** Whether the lead holds records back ({@code id.on-excess-lead=pause}). */
        boolean leadExceeded();

        /** Whether the next ID would wait now (starts the wait's clock). */
        boolean mustWait();

        /** The next ID no longer waits: the wait is counted and over. */
        void waitEnded();

        /** The first record is set aside (nothing was before it). */
        void firstHeld();

        /** Stamps a record set aside (its provenance already in its headers). */
        void stamp(Record<byte[], byte[]> record, Object plan);
    }

    private final ProcessorContext<?, ?> context;
    private final PauseBuffer paused;
    private final SourceHeaders sources;
    private final StampedCheck stamped;
    /** The ID in the value too, or null: header only. */
    private final ValueField values;
    private final TaskStats taskStats;
    private final int partition;
    private final boolean pausesOnLead;
    private final Stamping stamping;
    private Cancellable drain;
    /** This incarnation of the task ended: its records belong to the next one's buffer (see {@link #drain}). */
    private boolean closed;
    /**
     * The input topic of the records set aside (the dead-letter record of one refused on its way out names it): the
     * configured input until a record is set aside, so that records restored set aside at a task's start name it too.
     */
    private String asideTopic;
    /** Whether a record was set aside by this incarnation (its topic is then the one the records came from). */
    private boolean held;
    /** The lookup of a schema the task's next record set aside needs (null: none under way); beside the stream thread. */
    private CompletableFuture<Void> lookup;

    SetAside(ProcessorContext<?, ?> context, PauseBuffer paused, SourceHeaders sources, StampedCheck stamped, ValueField values,
             TaskStats taskStats, int partition, boolean pausesOnLead, String inputTopic, Stamping stamping) {
        this.context = context;
        this.asideTopic = inputTopic;
        this.paused = paused;
        this.sources = sources;
        this.stamped = stamped;
        this.values = values;
        this.taskStats = taskStats;
        this.partition = partition;
        this.pausesOnLead = pausesOnLead;
        this.stamping = stamping;
    }

    boolean isEmpty() {
        return paused.isEmpty();
    }

    /**
     * The task's start found records set aside by a previous incarnation: stamped in order, after the check of what is
     * already stamped when {@code skipsStamped} (the previous owner may have stamped some of them and stopped before a
     * commit removed them from the store).
     */
    void restored(boolean skipsStamped) {
        if (paused.isEmpty()) {
            return;
        }
        log.info("partition {}: {} records set aside before the restart wait to be stamped", partition, paused.size());
        long oldest = sources.offsetOf(paused.peek());
        if (skipsStamped && oldest >= 0) {
            // checked against the output as the first inputs are, from the oldest on, before the drain stamps
            stamped.checkFrom(oldest);
        }
        schedule();
    }

    /** An arriving record's schema must be looked up: the lookup starts now unless one runs or records wait before it. */
    void lookUp(byte[] value) {
        if (lookup == null && paused.isEmpty()) {
            lookup = values.lookup(value);
        }
    }

    /** Keeps the record, with its provenance, until its ID no longer waits (and, policy {@code pause}, the clock caught up). */
    void hold(Record<byte[], byte[]> record) {
        if (paused.isEmpty()) {
            stamping.firstHeld();
            schedule();
        }
        if (!held) {
            held = true;
            asideTopic = context.recordMetadata().map(RecordMetadata::topic).orElse(asideTopic);
        }
        sources.setAside(record.headers(), context.recordMetadata().orElseThrow());
        paused.append(record);
        taskStats.heldBack(paused.size());
    }

    private void schedule() {
        if (drain == null) {
            drain = context.schedule(DRAIN_EVERY, PunctuationType.WALL_CLOCK_TIME, ignored -> drain());
        }
    }

    /** Stamps the records set aside in order while their IDs need not wait and the lead allows, a bounded batch per call. */
    private void drain() {
        if (closed) {
            // a punctuation of an earlier incarnation of the task that outlived it (its close failed before the cancel, or
            // Kafka Streams started the processor again without a close): this buffer's positions are stale, the store is
            // the next incarnation's
            close();
            return;
        }
        paused.release();       // between commits: those taken out before the last one are durable in the output
        int drained = 0;
        boolean leadHeld = false;
        while (!paused.isEmpty() && drained < DRAIN_BATCH) {
            StampedCheck.Head head = stamped.atHead(paused::peek, sources::offsetOf);
            if (head == StampedCheck.Head.WAIT) {
                break;
            }
            if (head == StampedCheck.Head.SKIP) {
                paused.removeHead();        // set aside before the read was done: found in the output, not stamped again
                continue;
            }
            if (lookup != null) {
                if (!lookup.isDone()) {
                    break;
                }
                CompletableFuture<Void> done = lookup;
                lookup = null;
                rethrowFailure(done);
            }
            if (pausesOnLead && stamping.leadExceeded()) {
                leadHeld = true;
                break;
            }
            if (stamping.mustWait()) {
                break;
            }
            Record<byte[], byte[]> record = paused.peek();
            long offset = sources.offsetOf(record);
            SourceHeaders.leavingStore(record.headers());
            Object plan = null;
            try {
                if (values != null) {
                    plan = values.inspectNow(record.value());
                    if (plan == ValueField.LOOKUP) {
                        lookup = values.lookup(record.value());
                        break;
                    }
                }
                // the value's write may refuse it too (an Avro overwrite's walk to the field, on a deeper stack than the
                // check's): its ID is then issued and unused, the record a dead letter like one the check refused
                stamping.stamp(record, plan);
            } catch (BadRecordException refused) {
                paused.removeHead();
                taskStats.heldBack(paused.size());
                stamping.waitEnded();        // its ID no longer waited
                throw new SetAsideRefused(refused, record, asideTopic, partition, offset);
            }
            paused.removeHead();
            drained++;
        }
        if (drained > 0 && !leadHeld) {
            stamping.waitEnded();      // a wait that begins again later is a new one
        }
        taskStats.heldBack(paused.size());
        if (paused.isEmpty()) {
            if (drained > 0 && pausesOnLead) {
                log.info("partition {}: the clock caught up; stamping resumed", partition);
            }
            // runs on while records taken out wait for a commit to delete them: a punctuation also makes a commit due
            if (!paused.awaitsCommit()) {
                drain.cancel();
                drain = null;
            }
        }
    }

    /**
     * A lookup that failed otherwise than by a refusal or an outage (credentials refused meanwhile, a bug) fails the task
     * as the same failure on the record's arrival would, its records still set aside; not looked up again and again.
     */
    private static void rethrowFailure(CompletableFuture<Void> lookup) {
        try {
            lookup.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /** The task closes: the records stay in the store for the next owner (those stamped leave at the closing commit's end). */
    void close() {
        closed = true;
        paused.closing();
        if (drain != null) {
            drain.cancel();
            drain = null;
        }
    }
}
