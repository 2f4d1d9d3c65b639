package io.snowstamp.config;

/**
 * Where the admin HTTP server of {@code run} listens ({@code admin.*} keys).
 *
 * @param port           TCP port; {@link #OFF} when the server is off, 0 for any free port
 * @param bind           address to listen on ({@code 127.0.0.1} unless configured otherwise)
 * @param advertisedHost host name the other instances of the application use to reach this one;
 *                       null to derive it from {@code bind} (see {@link #advertisedHost(String)})
 */
public record AdminSettings(int port, String bind, String advertisedHost) {
    /** {@link #port()} of a server that is off. */
    public static final int OFF = -1;

    public AdminSettings {
        if (port < OFF || port > 65_535) {
            throw new ConfigException(Keys.ADMIN_PORT, port, "0..65535, or empty for off");
        }
        if (bind == null || !bind.matches("[a-zA-Z0-9.:_%\\[\\]-]{1,255}")) {
            throw new ConfigException(Keys.ADMIN_BIND, bind, "an IP address or host name (0.0.0.0 for every interface)");
        }
        if (advertisedHost != null && !advertisedHost.matches("[a-zA-Z0-9._-]{1,255}")) {
            throw new ConfigException(Keys.ADMIN_ADVERTISED_HOST, advertisedHost, "a host name or IPv4 address");
        }
    }

    /** The defaults: off, on 127.0.0.1. */
    public static AdminSettings off() {
        return new AdminSettings(OFF, "127.0.0.1", null);
    }

    public boolean enabled() {
        return port != OFF;
    }

    /**
     * The host other instances should use: {@code admin.advertised-host} when set, else the bind
     * address, else (a wildcard bind such as {@code 0.0.0.0}) {@code hostName}.
     */
    public String advertisedHost(String hostName) {
        if (advertisedHost != null) {
            return advertisedHost;
        }
        return bind.equals("0.0.0.0") || bind.equals("::") || bind.equals("[::]") ? hostName : bind;
    }

    /** {@code off} or {@code bind:port}, for logs. */
    public String describe() {
        return enabled() ? bind + ":" + port : "off";
    }
}
