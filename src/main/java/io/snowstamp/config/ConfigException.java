package io.snowstamp.config;

import io.snowstamp.SnowstampException;

/** Invalid configuration: the message names the key, the value and what is accepted. */
public class ConfigException extends SnowstampException {
    public ConfigException(String key, Object value, String accepted) {
        super(key + "=" + value + " is invalid: accepted " + accepted);
    }

    public ConfigException(String message) {
        super(message);
    }
}
