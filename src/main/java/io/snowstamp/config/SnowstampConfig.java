package io.snowstamp.config;

import io.snowstamp.id.IdLayout;
import io.snowstamp.id.InvalidLayoutException;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * snowstamp's whole configuration, validated and immutable. Kafka {@code Properties} are built from
 * it only at the Kafka boundary ({@code runtime.KafkaSettings}).
 *
 * @param jsonField  field to inject the ID into, or null for header-only stamping
 * @param admin      the admin HTTP server of {@code run} (off unless {@code admin.port} is set)
 * @param kafka      {@code kafka.*} keys with the prefix removed, passed to every Kafka client
 * @param idMode     snowflake IDs or per-tag sequences
 * @param sequence   the {@code sequence.*} keys (used in sequence mode only)
 * @param registry   the worker registry keys (snowflake mode); with {@code id.worker-offset=auto}
 *                   {@code workerOffset} is 0 until the registry has chosen ({@link #withWorkerOffset})
 */
public record SnowstampConfig(
        String applicationId,
        String inputTopic,
        String outputTopic,
        String dlqTopic,
        Guarantee processingGuarantee,
        IdLayout layout,
        long datacenterId,
        long workerOffset,
        String jsonField,
        JsonType jsonType,
        OnExistingField onExistingField,
        int maxDepth,
        boolean provenance,
        Duration maxLead,
        OnExcessLead onExcessLead,
        Duration reservation,
        Duration heartbeat,
        boolean tailGuard,
        Duration tailGuardTimeout,
        Duration takeoverGap,
        Profile profile,
        Path stateDir,
        String instanceId,
        AdminSettings admin,
        Map<String, String> kafka,
        IdMode idMode,
        SequenceSettings sequence,
        RegistrySettings registry) {

    /** What the stamper issues. */
    public enum IdMode {
        /** time-ordered 64-bit IDs, unique across partitions (the default) */
        SNOWFLAKE,
        /** dense, strictly increasing numbers per tag (Leaf-segment) */
        SEQUENCE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Kafka Streams processing guarantee. */
    public enum Guarantee {
        EXACTLY_ONCE_V2, AT_LEAST_ONCE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How the injected JSON field is written. */
    public enum JsonType {
        NUMBER, STRING;

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

    /** What to do when IDs run further ahead of the wall clock than {@code id.max-lead}. */
    public enum OnExcessLead {
        CONTINUE, PAUSE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What to do with a JSON object that already has the field. */
    public enum OnExistingField {
        REJECT, OVERWRITE, KEEP;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public SnowstampConfig {
        if (admin == null) {
            admin = AdminSettings.off();
        }
        if (registry == null) {
            registry = RegistrySettings.off();
        }
        if (workerOffset > layout.maxWorker()) {
            throw new ConfigException(Keys.ID_WORKER_OFFSET, workerOffset,
                    "0.." + layout.maxWorker() + " (the layout has " + layout.workerBits() + " worker bits)");
        }
        if (datacenterId > layout.maxDatacenter()) {
            throw new ConfigException(Keys.ID_DATACENTER_ID, datacenterId,
                    "0.." + layout.maxDatacenter() + " (the layout has " + layout.datacenterBits() + " datacenter bits)");
        }
        if (inputTopic.equals(outputTopic)) {
            throw new ConfigException(Keys.OUTPUT_TOPIC, outputTopic, "a topic other than input.topic");
        }
        // as the input, bad records would loop forever; as the output, they would break "partition p written by task p only"
        if (dlqTopic.equals(inputTopic) || dlqTopic.equals(outputTopic)) {
            throw new ConfigException(Keys.DLQ_TOPIC, dlqTopic, "a topic other than input.topic and output.topic");
        }
        if (idMode == IdMode.SEQUENCE) {
            String tags = sequence.tagsTopic();
            if (tags.equals(inputTopic) || tags.equals(outputTopic) || tags.equals(dlqTopic)) {
                throw new ConfigException(Keys.SEQUENCE_TAGS_TOPIC, tags, "a topic other than input.topic, output.topic and dlq.topic");
            }
            if (jsonField != null && jsonField.equals(sequence.tagField())) {
                throw new ConfigException(Keys.SEQUENCE_TAG_SOURCE, sequence.tagSource(),
                        "a field other than stamp.json-field (" + jsonField + "): the number would replace the tag");
            }
        }
        kafka = java.util.Collections.unmodifiableMap(new TreeMap<>(kafka));
    }

    /** Validates a merged key/value map (see {@link ConfigLoader}). */
    public static SnowstampConfig from(Map<String, String> raw) {
        Values v = new Values(raw);
        IdLayout layout = layout(v);
        String jsonField = v.string(Keys.STAMP_JSON_FIELD);
        Map<String, String> kafka = new TreeMap<>();
        raw.forEach((key, value) -> {
            if (key.startsWith(Keys.KAFKA_PREFIX)) {
                kafka.put(key.substring(Keys.KAFKA_PREFIX.length()), value);
            }
        });
        BootstrapServers.check(kafka.get("bootstrap.servers"));
        String instanceId = v.isSet(Keys.INSTANCE_ID) ? v.string(Keys.INSTANCE_ID) : hostName();
        if (!instanceId.matches("[a-zA-Z0-9._-]{1,100}")) {
            throw new ConfigException(Keys.INSTANCE_ID, instanceId, "1-100 of a-z A-Z 0-9 . _ -");
        }
        String applicationId = v.string(Keys.APPLICATION_ID);
        if (!applicationId.matches("[a-zA-Z0-9._-]{1,200}")) {
            throw new ConfigException(Keys.APPLICATION_ID, applicationId, "1-200 of a-z A-Z 0-9 . _ -");
        }
        Guarantee guarantee = v.choice(Keys.PROCESSING_GUARANTEE, Guarantee.class);
        RegistrySettings registry = RegistrySettings.from(v);
        return new SnowstampConfig(
                applicationId,
                v.topic(Keys.INPUT_TOPIC),
                v.topic(Keys.OUTPUT_TOPIC),
                v.topic(Keys.DLQ_TOPIC),
                guarantee,
                layout,
                v.longInRange(Keys.ID_DATACENTER_ID, 0, Long.MAX_VALUE),
                registry.autoOffset() ? 0 : v.longInRange(Keys.ID_WORKER_OFFSET, 0, Long.MAX_VALUE),
                jsonField.isEmpty() ? null : jsonField,
                v.choice(Keys.STAMP_JSON_TYPE, JsonType.class),
                v.choice(Keys.STAMP_ON_EXISTING_FIELD, OnExistingField.class),
                v.intInRange(Keys.STAMP_MAX_DEPTH, 1, 1000),
                v.bool(Keys.STAMP_PROVENANCE),
                v.duration(Keys.ID_MAX_LEAD, Duration.ofMillis(1), Duration.ofDays(1)),
                v.choice(Keys.ID_ON_EXCESS_LEAD, OnExcessLead.class),
                v.duration(Keys.ID_RESERVATION, Duration.ZERO, Duration.ofHours(1)),
                v.duration(Keys.LEASE_HEARTBEAT, Duration.ofMillis(100), Duration.ofHours(1)),
                v.bool(Keys.RECOVERY_TAIL_GUARD),
                v.duration(Keys.RECOVERY_TAIL_GUARD_TIMEOUT, Duration.ofSeconds(1), Duration.ofHours(1)),
                v.isSet(Keys.RECOVERY_TAKEOVER_GAP) ? v.duration(Keys.RECOVERY_TAKEOVER_GAP, Duration.ZERO, Duration.ofHours(1))
                        : guarantee == Guarantee.AT_LEAST_ONCE ? Duration.ofSeconds(1) : Duration.ZERO,
                v.choice(Keys.PROFILE, Profile.class),
                Path.of(v.string(Keys.STATE_DIR)),
                instanceId,
                new AdminSettings(v.isSet(Keys.ADMIN_PORT) ? v.intInRange(Keys.ADMIN_PORT, 0, 65_535) : AdminSettings.OFF,
                        v.string(Keys.ADMIN_BIND),
                        v.isSet(Keys.ADMIN_ADVERTISED_HOST) ? v.string(Keys.ADMIN_ADVERTISED_HOST) : null),
                kafka,
                v.choice(Keys.ID_MODE, IdMode.class),
                SequenceSettings.from(v),
                registry);
    }

    private static IdLayout layout(Values v) {
        IdLayout layout;
        try {
            layout = IdLayout.preset(v.string(Keys.ID_PRESET));
        } catch (InvalidLayoutException e) {
            throw new ConfigException(Keys.ID_PRESET, v.string(Keys.ID_PRESET), "one of " + String.join(", ", IdLayout.presetNames()));
        }
        try {
            if (v.isSet(Keys.ID_EPOCH)) {
                layout = layout.withEpochMillis(v.instantMillis(Keys.ID_EPOCH));
            }
            if (v.isSet(Keys.ID_TIME_UNIT)) {
                layout = layout.withUnitMillis(v.duration(Keys.ID_TIME_UNIT,
                        java.time.Duration.ofMillis(1), java.time.Duration.ofSeconds(1)).toMillis());
            }
            // all widths at once: one at a time, the preset's other widths would make valid
            // combinations fail in between (41/5/5/12 from snowflake's 41/0/10/12)
            int timeBits = v.isSet(Keys.ID_TIME_BITS) ? v.intInRange(Keys.ID_TIME_BITS, 0, 63) : layout.timeBits();
            int datacenterBits = v.isSet(Keys.ID_DATACENTER_BITS)
                    ? v.intInRange(Keys.ID_DATACENTER_BITS, 0, 63) : layout.datacenterBits();
            int workerBits = v.isSet(Keys.ID_WORKER_BITS) ? v.intInRange(Keys.ID_WORKER_BITS, 0, 63) : layout.workerBits();
            int sequenceBits = v.isSet(Keys.ID_SEQUENCE_BITS)
                    ? v.intInRange(Keys.ID_SEQUENCE_BITS, 0, 63) : layout.sequenceBits();
            layout = new IdLayout(timeBits, datacenterBits, workerBits, sequenceBits,
                    layout.epochMillis(), layout.unitMillis(), layout.workerInLowBits());
            if (v.isSet(Keys.ID_WORKER_IN_LOW_BITS)) {
                layout = layout.withWorkerInLowBits(v.bool(Keys.ID_WORKER_IN_LOW_BITS));
            }
        } catch (InvalidLayoutException e) {
            throw new ConfigException(e.getMessage());
        }
        return layout;
    }

    private static String hostName() {
        try {
            String name = InetAddress.getLocalHost().getHostName().replaceAll("[^a-zA-Z0-9._-]", "-");
            return name.isEmpty() ? "snowstamp" : name;
        } catch (UnknownHostException e) {
            return "snowstamp";
        }
    }

    /** The worker ID of the generator for an input partition. */
    public long workerFor(int partition) {
        return workerOffset + partition;
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
    public SnowstampConfig withBootstrapServers(String servers) {
        Map<String, String> copy = new TreeMap<>(kafka);
        copy.put("bootstrap.servers", servers);
        return new SnowstampConfig(applicationId, inputTopic, outputTopic, dlqTopic, processingGuarantee, layout,
                datacenterId, workerOffset, jsonField, jsonType, onExistingField, maxDepth, provenance, maxLead, onExcessLead, reservation,
                heartbeat, tailGuard, tailGuardTimeout, takeoverGap, profile, stateDir, instanceId, admin, copy, idMode, sequence,
                registry);
    }

    /** A copy with the worker offset the registry granted ({@code id.worker-offset=auto}). */
    public SnowstampConfig withWorkerOffset(long offset) {
        return new SnowstampConfig(applicationId, inputTopic, outputTopic, dlqTopic, processingGuarantee, layout,
                datacenterId, offset, jsonField, jsonType, onExistingField, maxDepth, provenance, maxLead, onExcessLead, reservation,
                heartbeat, tailGuard, tailGuardTimeout, takeoverGap, profile, stateDir, instanceId, admin, kafka, idMode, sequence,
                registry);
    }

    /** Never the raw record text: it would show secrets. */
    @Override
    public String toString() {
        return describeMasked();
    }

    /** The configuration as text for a log line, with secrets masked. */
    public String describeMasked() {
        StringBuilder out = new StringBuilder();
        out.append("application.id=").append(applicationId)
                .append(" input=").append(inputTopic).append(" output=").append(outputTopic).append(" dlq=").append(dlqTopic)
                .append(" guarantee=").append(processingGuarantee)
                .append(" layout=[").append(layout.describe()).append("]")
                .append(" worker-offset=").append(workerOffset).append(" datacenter-id=").append(datacenterId)
                .append(" max-lead=").append(Durations.format(maxLead)).append('/').append(onExcessLead)
                .append(" reservation=").append(Durations.format(reservation))
                .append(" tail-guard=").append(tailGuard).append(" takeover-gap=").append(Durations.format(takeoverGap))
                .append(" json-field=").append(jsonField == null ? "(header only)" : jsonField)
                .append(" admin=").append(admin.describe())
                .append(" instance=").append(instanceId);
        if (idMode == IdMode.SEQUENCE) {       // snowflake mode, the default, is described as before
            out.append(" id.mode=sequence tag-source=").append(sequence.tagSource()).append(" auto-create=").append(sequence.autoCreate())
                    .append(" default-start=").append(sequence.defaultStart()).append(" default-step=").append(sequence.defaultStep())
                    .append(" tags-topic=").append(sequence.tagsTopic());
        }
        kafka.forEach((key, value) -> out.append(" kafka.").append(key).append('=').append(Secrets.mask(key, value)));
        return out.toString();
    }
}
