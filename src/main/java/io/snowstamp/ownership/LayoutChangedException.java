package io.snowstamp.ownership;

import io.snowstamp.SnowstampException;

/** The stored worker state was written with another ID layout; continuing could overlap old IDs. */
public final class LayoutChangedException extends SnowstampException {
    private final String stored;
    private final String configured;

    public LayoutChangedException(int partition, String stored, String configured) {
        super("partition " + partition + ": the worker state was written with ID layout " + stored
                + " but the configured layout is " + configured + "; refusing to start because IDs of the new"
                + " layout could equal IDs already issued (restore the old id.* settings, or use a new"
                + " output topic and application.id)");
        this.stored = stored;
        this.configured = configured;
    }

    public String stored() {
        return stored;
    }

    public String configured() {
        return configured;
    }
}
