package io.snowstamp.config;

import java.time.Duration;

/**
 * The worker registry keys ({@code id.space}, {@code id.worker-registry}, {@code registry.*}) and
 * {@code id.worker-offset=auto}: which ID space this application's workers belong to, and how the
 * registry that keeps worker ranges of one space apart is used.
 *
 * @param enabled     false ({@code id.worker-registry=off}): nothing checks worker ranges (a WARN at start says so)
 * @param topic       the registry topic (compacted, one partition)
 * @param space       the ID space: applications whose IDs end up together share one
 * @param autoOffset  {@code id.worker-offset=auto}: the registry picks the lowest free range
 * @param heartbeat   how often a running application re-asserts its claim
 * @param staleAfter  a claim without heartbeat for longer is listed as stale
 * @param expireAfter null (default): an active claim is never taken over; else {@code auto} may recycle a
 *                    claim without heartbeat for longer, after recording its high-water marks
 */
public record RegistrySettings(boolean enabled, String topic, String space, boolean autoOffset, Duration heartbeat,
                               Duration staleAfter, Duration expireAfter) {
    /** Value of {@code id.worker-offset} that lets the registry choose. */
    public static final String AUTO = "auto";

    public RegistrySettings {
        if (expireAfter != null && expireAfter.compareTo(heartbeat.multipliedBy(3)) < 0) {
            throw new ConfigException(Keys.REGISTRY_EXPIRE_AFTER, Durations.format(expireAfter),
                    "at least 3 x registry.heartbeat (" + Durations.format(heartbeat.multipliedBy(3)) + ") or empty (off)");
        }
    }

    /** The registry off, as in unit tests of other parts; offsets are then the configured ones. */
    public static RegistrySettings off() {
        return new RegistrySettings(false, "snowstamp-workers", "default", false, Duration.ofSeconds(10), Duration.ofMinutes(1), null);
    }

    static RegistrySettings from(Values v) {
        String mode = v.string(Keys.ID_WORKER_REGISTRY).toLowerCase(java.util.Locale.ROOT);
        if (!mode.equals("on") && !mode.equals("off")) {
            throw new ConfigException(Keys.ID_WORKER_REGISTRY, v.string(Keys.ID_WORKER_REGISTRY), "on or off");
        }
        String space = v.string(Keys.ID_SPACE);
        if (!space.matches("[a-zA-Z0-9._-]{1,100}")) {
            throw new ConfigException(Keys.ID_SPACE, space, "1-100 of a-z A-Z 0-9 . _ -");
        }
        boolean auto = v.string(Keys.ID_WORKER_OFFSET).equalsIgnoreCase(AUTO);
        if (auto && mode.equals("off")) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, AUTO, "a whole number when id.worker-registry=off (auto needs the registry)");
        }
        Duration heartbeat = v.duration(Keys.REGISTRY_HEARTBEAT, Duration.ofMillis(100), Duration.ofMinutes(10));
        return new RegistrySettings(mode.equals("on"), v.topic(Keys.REGISTRY_TOPIC), space, auto, heartbeat,
                v.duration(Keys.REGISTRY_STALE_AFTER, Duration.ofSeconds(1), Duration.ofDays(365)),
                v.isSet(Keys.REGISTRY_EXPIRE_AFTER) ? v.duration(Keys.REGISTRY_EXPIRE_AFTER, Duration.ofSeconds(1), Duration.ofDays(365)) : null);
    }

    /**
     * The longest one heartbeat may take (its read, its writes, the read back), half a heartbeat and a
     * second: every wait for Kafka in it ends by then, and the heartbeat is tried again at the next one.
     */
    public Duration heartbeatTimeout() {
        return heartbeat.dividedBy(2).plusSeconds(1);
    }

    /**
     * How long a claimant waits in a young registry while applications it does not know may still be
     * running (a registry deleted and recreated): long enough for every running application to re-assert
     * its claim first. The heartbeat under way at the recreation ends within {@link #heartbeatTimeout},
     * the next starts a heartbeat later and re-asserts within the timeout again: one heartbeat, two
     * timeouts, and a second to spare (two heartbeats and three seconds).
     */
    public Duration grace() {
        return heartbeat.plus(heartbeatTimeout().multipliedBy(2)).plusSeconds(1);
    }
}
