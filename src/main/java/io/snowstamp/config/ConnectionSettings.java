package io.snowstamp.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * How this instance talks to Kafka: which application it is, under which name, where its local
 * state lives, the processing guarantee and tuning profile, and the {@code kafka.*} client keys.
 * Every component that opens a Kafka client takes this slice ({@code runtime.KafkaSettings} turns
 * it into {@code Properties}).
 *
 * @param applicationId       {@code application.id}: the Kafka Streams application (group, changelog names)
 * @param instanceId          {@code instance.id}: this instance (lease holder, state sub-directory)
 * @param stateDir            {@code state.dir}: local state directory, one sub-directory per instance
 * @param processingGuarantee {@code processing.guarantee}
 * @param profile             {@code profile}: the Kafka settings preset
 * @param kafka               {@code kafka.*} keys with the prefix removed, passed to every Kafka client
 */
public record ConnectionSettings(String applicationId, String instanceId, Path stateDir, Guarantee processingGuarantee,
                                 Profile profile, Map<String, String> kafka) {

    /** Kafka Streams processing guarantee. */
    public enum Guarantee {
        EXACTLY_ONCE_V2, AT_LEAST_ONCE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Kafka settings presets: {@code default} or {@code throughput} (longer commit interval). */
    public enum Profile {
        DEFAULT, THROUGHPUT;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public ConnectionSettings {
        if (!instanceId.matches("[a-zA-Z0-9._-]{1,100}")) {
            throw new ConfigException(Keys.INSTANCE_ID, instanceId, "1-100 of a-z A-Z 0-9 . _ -");
        }
        if (!applicationId.matches("[a-zA-Z0-9._-]{1,200}")) {
            throw new ConfigException(Keys.APPLICATION_ID, applicationId, "1-200 of a-z A-Z 0-9 . _ -");
        }
        kafka = Collections.unmodifiableMap(new TreeMap<>(kafka));
    }

    static ConnectionSettings from(Values v, Map<String, String> raw) {
        Map<String, String> kafka = new TreeMap<>();
        raw.forEach((key, value) -> {
            if (key.startsWith(Keys.KAFKA_PREFIX)) {
                kafka.put(key.substring(Keys.KAFKA_PREFIX.length()), value);
            }
        });
        BootstrapServers.check(kafka.get("bootstrap.servers"));
        checkAcks(kafka);
        checkUncleanElection(kafka);
        return new ConnectionSettings(v.string(Keys.APPLICATION_ID),
                v.isSet(Keys.INSTANCE_ID) ? v.string(Keys.INSTANCE_ID) : hostName(),
                Path.of(v.string(Keys.STATE_DIR)),
                v.choice(Keys.PROCESSING_GUARANTEE, Guarantee.class),
                v.choice(Keys.PROFILE, Profile.class),
                kafka);
    }

    /** The producer settings a stamper's {@code kafka.*} keys may give {@code acks} (Kafka Streams' and the plain clients'). */
    private static final List<String> ACKS_KEYS = List.of("acks", "producer.acks");

    /**
     * Refuses {@code acks} other than {@code all}: a number may leave a task only once the changelog record that covers it
     * was acknowledged and read past (design.md, "The ownership lease"); with {@code acks=0} a producer reports a write it
     * never heard back about, so a reservation that may never reach the log would count as read back, and with
     * {@code acks=1} an acknowledged reservation dies with its leader.
     */
    private static void checkAcks(Map<String, String> kafka) {
        for (String key : ACKS_KEYS) {
            String value = kafka.get(key);
            if (value != null && !value.trim().equals("all") && !value.trim().equals("-1")) {
                throw new ConfigException(Keys.KAFKA_PREFIX + key, value,
                        "all (or -1, the same): a reservation counts only once every in-sync replica has it");
            }
        }
    }

    /**
     * Refuses an unclean leader election on the topics the stamper creates ({@code kafka.topic.*}): an out-of-sync replica
     * made leader drops acknowledged records, among them a reservation or segment a number was issued under (design.md's
     * argument assumes it off, Kafka's default).
     */
    private static void checkUncleanElection(Map<String, String> kafka) {
        String key = "topic.unclean.leader.election.enable";
        String value = kafka.get(key);
        if (value != null && !value.trim().equalsIgnoreCase("false")) {
            throw new ConfigException(Keys.KAFKA_PREFIX + key, value,
                    "false (Kafka's default): an unclean election loses acknowledged state records, and with them what was issued");
        }
    }

    private static String hostName() {
        try {
            String name = InetAddress.getLocalHost().getHostName().replaceAll("[^a-zA-Z0-9._-]", "-");
            return name.isEmpty() ? "snowstamp" : name;
        } catch (UnknownHostException e) {
            return "snowstamp";
        }
    }

    /**
     * The largest request the stamper's producer sends ({@code kafka.max.request.size} or
     * {@code kafka.producer.max.request.size}, else Kafka's default of 1 MiB): a stamped record
     * that would not fit goes to the dead-letter topic instead of stopping the stamper.
     */
    public int maxRequestSize() {
        String value = kafka.getOrDefault("producer.max.request.size", kafka.get("max.request.size"));
        if (value == null) {
            return 1_048_576;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException("kafka.max.request.size", value, "a whole number of bytes");
        }
    }

    /** Whether snowstamp must start its own in-process broker (no {@code kafka.bootstrap.servers}). */
    public boolean embeddedBroker() {
        String servers = kafka.get("bootstrap.servers");
        return servers == null || servers.isBlank();
    }

    /** A copy with {@code kafka.bootstrap.servers} set (used once the embedded broker is up). */
    public ConnectionSettings withBootstrapServers(String servers) {
        Map<String, String> copy = new TreeMap<>(kafka);
        copy.put("bootstrap.servers", servers);
        return new ConnectionSettings(applicationId, instanceId, stateDir, processingGuarantee, profile, copy);
    }
}
