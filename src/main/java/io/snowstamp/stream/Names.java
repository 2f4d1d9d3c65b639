package io.snowstamp.stream;

import io.snowstamp.state.IdHeader;
import io.snowstamp.state.StateNames;

/** Store, processor and changelog names of the stamping topology; the header names live in {@link IdHeader}. */
public final class Names {
    /** The worker-state store ({@link StateNames#STORE}). */
    public static final String STORE = StateNames.STORE;
    /** Records held back while a partition is paused ({@code id.on-excess-lead=pause}). */
    public static final String PENDING_STORE = "pending-records";

    static final String SOURCE = "input";
    static final String PROCESSOR = "stamp";
    static final String SINK = "output";

    private Names() {
    }

    /** The changelog topic of the worker-state store for an application id. */
    public static String changelogTopic(String applicationId) {
        return StateNames.changelogTopic(applicationId);
    }
}
