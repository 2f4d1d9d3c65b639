package io.snowstamp.recovery;

import io.snowstamp.SnowstampException;

/** The worker-state changelog of an application does not exist, or holds no state. */
public final class ChangelogUnavailableException extends SnowstampException {
    /** Why there is no state to read. */
    public enum Reason { MISSING, EMPTY }

    private final String topic;
    private final String applicationId;
    private final Reason reason;

    public ChangelogUnavailableException(String topic, String applicationId, Reason reason) {
        super(reason == Reason.MISSING
                ? "changelog topic " + topic + " does not exist: has application " + applicationId
                        + " ever run against this cluster? (check --application-id / application.id and --bootstrap-servers)"
                : "changelog topic " + topic + " is empty: application " + applicationId
                        + " has not started a task yet, so there is no worker state");
        this.topic = topic;
        this.applicationId = applicationId;
        this.reason = reason;
    }

    public String topic() {
        return topic;
    }

    public String applicationId() {
        return applicationId;
    }

    public Reason reason() {
        return reason;
    }
}
