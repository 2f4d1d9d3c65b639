package io.snowstamp.runtime;

import org.apache.kafka.common.errors.TimeoutException;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The stall watch's restart of the stream threads, and its one decision: when a replaced thread does not stop in time,
 * is the instance slow (some task made progress meanwhile: keep running) or stuck (none did: stop, to be started again)?
 * Over {@link Threads}, so that the decision is tested without a Kafka Streams instance ({@code ThreadReplacementTest}).
 */
final class ThreadReplacement {
    /** What became of a replacement. */
    enum Outcome {
        /** Every thread replaced. */
        REPLACED,
        /** A replaced thread did not stop in time, but a task made progress meanwhile: slow, not stuck. */
        SLOW,
        /** A replaced thread did not stop in time and no task made progress: the instance is stuck. */
        STUCK
    }

    /** The stream threads of a running instance ({@code KafkaStreams}' own calls). */
    interface Threads {
        int count();

        Optional<String> add();

        /** Removes the oldest thread, waiting up to {@code timeout} for it to stop; a {@link TimeoutException} if it did not. */
        Optional<String> remove(Duration timeout);
    }

    private ThreadReplacement() {
    }

    /**
     * Replaces every thread, a new one first and then the oldest, so that the instance never holds no thread.
     *
     * @param progress what the tasks have done so far, IDs issued per running task (keyed by the task's identity): a
     *                 snapshot that differs from the one taken before a removal means progress ({@link #same})
     * @param replaced told each replacement (removed thread, added thread), for the log
     */
    static Outcome replaceAll(Threads threads, Supplier<? extends Map<?, Long>> progress, Duration timeout, Replaced replaced) {
        int count = threads.count();
        for (int i = 0; i < count; i++) {
            Map<?, Long> before = progress.get();
            Optional<String> added = threads.add();
            try {
                Optional<String> removed = threads.remove(timeout);
                replaced.replaced(removed.orElse("(none)"), added.orElse("(none)"));
            } catch (TimeoutException e) {
                return same(progress.get(), before) ? Outcome.STUCK : Outcome.SLOW;
            }
        }
        return Outcome.REPLACED;
    }

    /**
     * Whether two snapshots show the same tasks with the same counts: keys as the maps compare them (an identity map: the
     * task objects), counts by value. Not {@code Map.equals}: an {@code IdentityHashMap} compares its values by reference
     * too, and two boxed counts above 127 are different objects, so every snapshot looked like progress and a stuck
     * instance never stopped.
     */
    static boolean same(Map<?, Long> now, Map<?, Long> before) {
        if (now.size() != before.size()) {
            return false;
        }
        for (Map.Entry<?, Long> entry : before.entrySet()) {
            Long count = now.get(entry.getKey());
            if (count == null || count.longValue() != entry.getValue().longValue()) {
                return false;
            }
        }
        return true;
    }

    /** One thread replaced by another. */
    interface Replaced {
        void replaced(String removed, String added);
    }
}
