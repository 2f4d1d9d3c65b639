package io.snowstamp.stream;

import io.snowstamp.resume.PartitionTail;
import io.snowstamp.resume.StampedInputs;
import io.snowstamp.resume.TailProbe;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * At-least-once: which inputs of a task's partition already have a record in the output, stamped by the previous owner
 * before it died or moved without committing its input offset; those are not stamped again (nothing issued, nothing
 * forwarded: the output holds each input once). The task's first input is its committed offset: the inputs already
 * stamped from there on are read once, from the output tail the start read (or further back, beside the stream thread);
 * where records were restored set aside, from the oldest of them on, at the task's start. An input is skipped only when
 * the output record naming its offset also carries its timestamp and key ({@link StampedInputs#contains}): a different
 * input at that offset is stamped. If the output cannot be read, every input is stamped (copies, never a loss). One per
 * task incarnation, used on its stream thread; separate from {@link StampProcessor} because it is a job of its own: the
 * record's path only asks it whether to skip.
 */
final class StampedCheck {
    /** The processor's logger: operators follow one logger for a task's story. */
    private static final Logger log = LoggerFactory.getLogger(StampProcessor.class);
    /** Where a task's read of its output further back than its start's tail read runs: beside the stream threads. */
    private static final Executor OUTPUT_READS = Executors.newCachedThreadPool(run -> {
        Thread thread = new Thread(run, "snowstamp-output-read");
        thread.setDaemon(true);
        return thread;
    });

    /** What the check says about the record at the head of the records set aside. */
    enum Head {
        /** the read of the output is still under way: the records set aside wait */
        WAIT,
        /** found in the output: removed, not stamped again */
        SKIP,
        /** not found (or not to be checked): stamped */
        STAMP
    }

    private final int partition;
    /** The input topic: a check started for records restored set aside reads its provenance. */
    private final String inputTopic;
    private final TailProbe tailProbe;
    private final PauseBuffer paused;
    private final TaskStats taskStats;
    /** The provenance the start's tail read saw (null: none). */
    private StampedInputs.Window tailSources;
    /** The inputs already stamped from the task's first input on (null: not known yet, or nothing left to skip). */
    private StampedInputs alreadyStamped;
    /** Whether the task's first input is still to come: it names the committed offset the skip starts at. */
    private boolean firstInput;
    /**
     * The read of the inputs already stamped further back than the start's tail read reached (null: none under way). It
     * runs beside the stream thread; the task's records wait set aside meanwhile and are checked when it is done.
     */
    private CompletableFuture<StampedInputs> stampedRead;
    /** The first record numbers in the records set aside before the read above was done: checked on the way out. */
    private long uncheckedFrom = -1;
    private long uncheckedTo = -1;
    /** The input offset the check starts at (-1: none started). */
    private long stampedFrom = -1;
    /** Whether this task said that the output's timestamps identify no input: once per task. */
    private boolean saidUnidentified;

    /**
     * @param tailSources the provenance the start's tail read saw (null: none)
     * @param skips       whether the task skips what is already stamped (at-least-once with the tail guard and provenance)
     */
    StampedCheck(int partition, String inputTopic, TailProbe tailProbe, PauseBuffer paused, TaskStats taskStats,
                 StampedInputs.Window tailSources, boolean skips) {
        this.partition = partition;
        this.inputTopic = inputTopic;
        this.tailProbe = tailProbe;
        this.paused = paused;
        this.taskStats = taskStats;
        this.tailSources = tailSources;
        this.firstInput = skips;
    }

    /** Whether an arriving input must be checked ({@link #stampedBefore}). */
    boolean active() {
        return firstInput || alreadyStamped != null;
    }

    /** Whether the read further back is under way: the task's records are set aside meanwhile. */
    boolean reading() {
        return stampedRead != null;
    }

    /** Whether {@code record}, the input at {@code offset}, arriving now, is already in the output (then counted as skipped). */
    boolean stampedBefore(long offset, Record<byte[], byte[]> record) {
        if (firstInput) {
            firstInput = false;
            if (stampedFrom < 0 || offset < stampedFrom) {
                // (a check started for records restored set aside covers every input from the oldest of them on)
                checkFrom(offset);
            }
            tailSources = null;
            if (stampedRead != null) {
                return false;       // set aside, checked on its way out
            }
        }
        return foundStamped(offset, record);
    }

    /**
     * What to do with the head of the records set aside ({@code head}; {@code offsetOf} gives its input offset): wait for
     * the read, skip it (the caller removes it) or stamp it. A record set aside keeps its input's timestamp and key.
     */
    Head atHead(Supplier<Record<byte[], byte[]>> head, ToLongFunction<Record<byte[], byte[]>> offsetOf) {
        if (stampedRead != null) {
            if (!stampedRead.isDone()) {
                return Head.WAIT;
            }
            alreadyStamped = settleRead();
        }
        if (alreadyStamped != null && paused.headSequence() >= uncheckedFrom && paused.headSequence() < uncheckedTo
                && foundStamped(head.get(), offsetOf)) {
            return Head.SKIP;        // set aside before the read was done: found in the output, not stamped again
        }
        return Head.STAMP;
    }

    private boolean foundStamped(Record<byte[], byte[]> record, ToLongFunction<Record<byte[], byte[]>> offsetOf) {
        return foundStamped(offsetOf.applyAsLong(record), record);
    }

    /** Whether the check found {@code record}, the input at {@code offset}, in the output (then counted as skipped). */
    private boolean foundStamped(long offset, Record<byte[], byte[]> record) {
        if (alreadyStamped == null) {
            return false;
        }
        if (alreadyStamped.contains(offset, record.timestamp(), record.key())) {
            taskStats.skippedStamped();
            return true;
        }
        if (offset >= alreadyStamped.highest() && paused.headSequence() >= uncheckedTo) {
            // past every input found, and no record set aside before the check was done waits to be checked: nothing
            // left to skip (a record arriving past them while they wait would otherwise let them out unchecked)
            alreadyStamped = null;
        }
        return false;
    }

    /**
     * Starts the check of the inputs from {@code from} on: from the start's tail read if it reaches back far enough, else
     * by a read further back beside the stream thread. Every record set aside now is checked on its way out.
     */
    void checkFrom(long from) {
        stampedFrom = from;
        uncheckedFrom = paused.headSequence();
        if (stampedRead != null) {
            stampedRead.cancel(false);
            stampedRead = null;
        }
        StampedInputs known = StampedInputs.of(tailSources, from, start -> null);
        if (known == null) {
            // the start's tail read did not reach back to the offset: read further back beside the thread
            alreadyStamped = null;
            stampedRead = CompletableFuture.supplyAsync(() -> tailProbe.stampedInputs(partition, inputTopic, from), OUTPUT_READS);
            return;
        }
        uncheckedTo = paused.nextSequence();
        alreadyStamped = report(known, from);
    }

    /** The read of the inputs already stamped is done (stream thread): what it found, or null (nothing, or it failed). */
    private StampedInputs settleRead() {
        CompletableFuture<StampedInputs> read = stampedRead;
        stampedRead = null;
        uncheckedTo = paused.nextSequence();
        try {
            return report(read.join(), stampedFrom);
        } catch (RuntimeException e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            log.warn("partition {}: cannot read which inputs from offset {} on are already stamped ({}); stamping them all"
                    + " (copies of inputs already in the output are possible, nothing is lost){}", partition, stampedFrom,
                    cause.getMessage(), PartitionTail.hint(cause));
            return null;
        }
    }

    /** Logs what the start found already stamped; null when nothing. */
    private StampedInputs report(StampedInputs found, long from) {
        if (found.unidentified() > 0 && !saidUnidentified) {
            saidUnidentified = true;
            log.info("partition {}: {} output records of inputs from offset {} on carry the time the broker wrote them, not"
                    + " their input's (the output topic's message.timestamp.type=LogAppendTime): they cannot be told from"
                    + " other inputs at the same offsets, so their inputs are stamped again (copies, never a loss)",
                    partition, found.unidentified(), from);
        }
        if (found.count() == 0) {
            return null;
        }
        log.atInfo().addKeyValue("event", "inputs-already-stamped").addKeyValue("partition", partition)
                .addKeyValue("skipped", found.count())
                .log("partition {}: {} inputs from offset {} on (up to {}) were stamped by the previous owner before"
                        + " their offsets were committed: not stamped again{}", partition, found.count(), from,
                        found.highest(), found.complete() ? "" : " (the output read stopped before reaching offset " + from
                                + ": older copies may remain)");
        return found;
    }

    /** The task closes: a read under way is cancelled (its records stay set aside in the store; the next owner checks them again). */
    void cancel() {
        if (stampedRead != null) {
            stampedRead.cancel(false);
            stampedRead = null;
        }
    }
}
