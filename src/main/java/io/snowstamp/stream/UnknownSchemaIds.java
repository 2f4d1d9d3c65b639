package io.snowstamp.stream;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Schema IDs the registry did not know when last asked, and when each is asked again. An ID is never
 * taken as gone for good (a registry replica lagging behind, a producer racing its own registration):
 * the first value of an unknown ID waits in place while the registry is asked again after growing
 * pauses ({@link #FIRST_PAUSES}); after that, values of that ID are dead-lettered without a request
 * until the next ask, which comes after a pause that doubles from {@link #FIRST_RECHECK_MILLIS} up to
 * {@link #LONGEST_RECHECK_MILLIS} while the ID stays unknown: a flood of values of an unknown ID costs
 * the registry a request per pause, and an ID registered late is stamped within that pause.
 * Thread-safe.
 */
final class UnknownSchemaIds {
    /** The first value's waits before it is dead-lettered: 1.5 s in all. */
    static final long[] FIRST_PAUSES = {100, 200, 400, 800};
    static final long FIRST_RECHECK_MILLIS = 1_000;
    static final long LONGEST_RECHECK_MILLIS = 60_000;

    /** schema ID -> {when it is asked again, the pause after that} */
    private final ConcurrentHashMap<Integer, long[]> unknown = new ConcurrentHashMap<>();

    /** Whether any ID is unknown: the common case (none) costs the caller nothing more. */
    boolean any() {
        return !unknown.isEmpty();
    }

    /** Whether the ID is one the registry did not know and its next ask is still ahead at {@code now}. */
    boolean stillUnknown(int schemaId, long now) {
        long[] next = unknown.get(schemaId);
        return next != null && now < next[0];
    }

    /** Whether the ID was unknown when last asked (its first value waited already). */
    boolean seen(int schemaId) {
        return unknown.containsKey(schemaId);
    }

    /** The registry did not know the ID at {@code now}: the next ask after a pause, doubled from the last. */
    void notFound(int schemaId, long now) {
        unknown.compute(schemaId, (id, last) -> {
            long pause = last == null ? FIRST_RECHECK_MILLIS : Math.min(last[1] * 2, LONGEST_RECHECK_MILLIS);
            return new long[] {now + pause, pause};
        });
    }

    /** The registry knows the ID now. */
    void found(int schemaId) {
        unknown.remove(schemaId);
    }
}
