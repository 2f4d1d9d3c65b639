package io.snowstamp.config;

import java.util.Locale;

/** Decides which configuration values must never be printed or logged. */
public final class Secrets {
    private Secrets() {
    }

    /** Whether the value of this key is a secret (passwords, JAAS configs, keys, tokens). */
    public static boolean isSecret(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.contains("password") || k.contains("jaas") || k.contains("secret") || k.contains("token")
                || k.endsWith(".key") || k.contains("credentials");
    }

    /** The value to show for a key: {@code [hidden]} for secrets. */
    public static String mask(String key, String value) {
        return isSecret(key) ? "[hidden]" : value;
    }
}
