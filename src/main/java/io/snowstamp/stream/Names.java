package io.snowstamp.stream;

/** Names shared by the topology, the tools that read its output and the tests. */
public final class Names {
    /** Header carrying the ID, decimal ASCII. */
    public static final String ID_HEADER = "snowstamp-id";
    /** Provenance header: {@code topic/partition/offset} of the input record. */
    public static final String SOURCE_HEADER = "snowstamp-src";
    /** Machine-readable reason on dead-letter records (see {@link BadRecordException.Code}). */
    public static final String ERROR_HEADER = "snowstamp-error";
    /** The worker-state store; its changelog is {@code <application.id>-worker-state-changelog}. */
    public static final String STORE = "worker-state";
    /** Records held back while a partition is paused ({@code id.on-excess-lead=pause}). */
    public static final String PENDING_STORE = "pending-records";

    static final String SOURCE = "input";
    static final String PROCESSOR = "stamp";
    static final String SINK = "output";

    private Names() {
    }

    /** The changelog topic of the worker-state store for an application id. */
    public static String changelogTopic(String applicationId) {
        return applicationId + "-" + STORE + "-changelog";
    }
}
