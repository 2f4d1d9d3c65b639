package io.snowstamp.state;

/**
 * The name of the worker-state store and of its changelog topic: the stamping topology creates
 * them, the offline tools ({@code changelog}, {@code recover}, {@code workers release}) read and
 * write the same topic, so the name lives below both.
 */
public final class StateNames {
    /** The worker-state store; its changelog is {@code <application.id>-worker-state-changelog}. */
    public static final String STORE = "worker-state";

    private StateNames() {
    }

    /** The changelog topic of the worker-state store for an application id. */
    public static String changelogTopic(String applicationId) {
        return applicationId + "-" + STORE + "-changelog";
    }
}
