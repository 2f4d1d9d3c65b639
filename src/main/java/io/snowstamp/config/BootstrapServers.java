package io.snowstamp.config;

import java.util.regex.Pattern;

/**
 * The shape of {@code kafka.bootstrap.servers}, checked before any Kafka client sees it: the
 * clients refuse a missing port only once constructed, with a message naming their own classes.
 */
final class BootstrapServers {
    /** {@code host:port}, {@code [v6-address]:port}, each with the optional {@code PROTOCOL://} the clients accept too. */
    private static final Pattern ADDRESS = Pattern.compile("(?:[a-zA-Z_]+://)?(\\[[0-9a-fA-F:.]+]|[a-zA-Z0-9._-]+):(\\d{1,5})");
    static final String ACCEPTED = "HOST:PORT[,HOST:PORT...] with ports 1..65535, e.g. localhost:9092";

    private BootstrapServers() {
    }

    /** Refuses a non-blank list with an entry that is not HOST:PORT; a blank list means the embedded broker. */
    static void check(String servers) {
        if (servers == null || servers.isBlank()) {
            return;
        }
        for (String entry : servers.split(",", -1)) {
            var m = ADDRESS.matcher(entry.trim());
            if (!m.matches() || Integer.parseInt(m.group(2)) < 1 || Integer.parseInt(m.group(2)) > 65_535) {
                throw new ConfigException(Keys.BOOTSTRAP_SERVERS, servers, ACCEPTED);
            }
        }
    }
}
