package io.snowstamp.stream;

import io.snowstamp.state.IdHeader;
import io.snowstamp.state.StateNames;

/** Store, processor and changelog names of the stamping topology; the header names live in {@link IdHeader}. */
public final class Names {
    /** Re-export of {@link IdHeader#ID} for the stamping code; readers outside {@code stream} use {@link IdHeader}. */
    public static final String ID_HEADER = IdHeader.ID;
    /** Re-export of {@link IdHeader#SOURCE}. */
    public static final String SOURCE_HEADER = IdHeader.SOURCE;
    /** Re-export of {@link IdHeader#ERROR}; its values are {@link BadRecordException.Code}. */
    public static final String ERROR_HEADER = IdHeader.ERROR;
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
