package io.snowstamp.id;

/**
 * An {@link IdLayout} (or a value checked against one) is outside its accepted range.
 *
 * <p>The message has the form {@code KEY=VALUE REASON}, naming the configuration key (for example
 * {@code id.worker-bits}), the rejected value and the accepted range, so it can be shown to a user
 * as the one line explaining why startup was refused.
 */
public class InvalidLayoutException extends IllegalArgumentException {

    private final String key;
    private final String value;

    /**
     * @param key    the configuration key, e.g. {@code id.worker-bits}
     * @param value  the rejected value as the user would write it
     * @param reason what is wrong and what is accepted, e.g. {@code "is out of range: accepted 0..63"}
     */
    public InvalidLayoutException(String key, String value, String reason) {
        super(key + "=" + value + " " + reason);
        this.key = key;
        this.value = value;
    }

    /** The configuration key the rejected value belongs to. */
    public String key() {
        return key;
    }

    /** The rejected value, formatted as in the message. */
    public String value() {
        return value;
    }
}
