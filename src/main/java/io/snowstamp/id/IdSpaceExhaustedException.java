package io.snowstamp.id;

import java.time.Instant;

/**
 * A generator would need a time field larger than its layout can hold: the layout's lifetime is
 * over (wall clock past it), or borrowing / a resume point pushed the logical clock past it.
 *
 * <p>No ID was issued by the call that threw, and the generator's state is unchanged, so every
 * later call throws again until a different layout (wider time field or later epoch) is used.
 */
public class IdSpaceExhaustedException extends IllegalStateException {

    private final IdLayout layout;
    private final long time;

    /**
     * @param layout the layout whose time field is exhausted
     * @param time   the time field value (units since the epoch) that was needed
     */
    public IdSpaceExhaustedException(IdLayout layout, long time) {
        super("ID space exhausted: time " + time + " is above the largest time " + layout.maxTime()
                + " of layout " + layout.fingerprint() + " (" + layout.describe() + "; last usable instant "
                + Instant.ofEpochMilli(layout.maxWallMillis()) + ")");
        this.layout = layout;
        this.time = time;
    }

    /** The exhausted layout. */
    public IdLayout layout() {
        return layout;
    }

    /** The time field value (units since the layout's epoch) that did not fit. */
    public long time() {
        return time;
    }
}
