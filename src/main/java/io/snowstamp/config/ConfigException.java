package io.snowstamp.config;

import io.snowstamp.SnowstampException;

/** Invalid configuration: the message names the key, the value and what is accepted. */
public class ConfigException extends SnowstampException {
    private final String key;

    public ConfigException(String key, Object value, String accepted) {
        super(key + "=" + value + " is invalid: accepted " + accepted);
        this.key = key;
    }

    public ConfigException(String message) {
        super(message);
        this.key = null;
    }

    private ConfigException(String key, String message) {
        super(message);
        this.key = key;
    }

    /** The key at fault, or null when the message names no single key. */
    public String key() {
        return key;
    }

    /** This error with where the key's value came from appended (a file, the environment, an option). */
    ConfigException from(String source) {
        return new ConfigException(key, getMessage() + " (from " + source + ")");
    }
}
