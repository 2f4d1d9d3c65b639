package io.snowstamp.config;

import java.util.Locale;
import java.util.Map;

/**
 * snowstamp's whole configuration, validated and immutable, as slices: each component takes only
 * the slice(s) it uses. Kafka {@code Properties} are built only at the Kafka boundary
 * ({@code runtime.KafkaSettings}). Checks that span slices (the tags topic, the tag field) are here;
 * each slice validates its own keys.
 *
 * @param connection application, instance, state directory, guarantee, profile and {@code kafka.*} keys
 * @param topics     input, output and dead-letter topics
 * @param ids        the snowflake ID layout, worker range, lead policy, reservation and lease heartbeat
 * @param stamp      the {@code stamp.*} keys: JSON field and provenance header
 * @param recovery   the {@code recovery.*} keys: tail guard and takeover gap
 * @param admin      the admin HTTP server of {@code run} (off unless {@code admin.port} is set)
 * @param idMode     snowflake IDs or per-tag sequences
 * @param sequence   the {@code sequence.*} keys (used in sequence mode only)
 * @param registry   the worker registry keys (snowflake mode); with {@code id.worker-offset=auto}
 *                   {@code ids.workerOffset} is 0 until the registry has chosen ({@link #withWorkerOffset})
 * @param schemaRegistry the {@code schema-registry.*} keys: the schema registry of Avro and Protobuf values
 */
public record SnowstampConfig(
        ConnectionSettings connection,
        TopicSettings topics,
        IdSettings ids,
        StampSettings stamp,
        RecoverySettings recovery,
        AdminSettings admin,
        IdMode idMode,
        SequenceSettings sequence,
        RegistrySettings registry,
        SchemaRegistrySettings schemaRegistry) {

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

    public SnowstampConfig {
        if (admin == null) {
            admin = AdminSettings.off();
        }
        if (registry == null) {
            registry = RegistrySettings.off();
        }
        if (schemaRegistry == null) {
            schemaRegistry = SchemaRegistrySettings.off();
        }
        if (stamp.schemaRegistryValues() && idMode == IdMode.SEQUENCE) {
            throw new ConfigException(Keys.STAMP_VALUE_FORMAT, stamp.valueFormat(), "json with mode=sequence");
        }
        if (idMode == IdMode.SEQUENCE) {
            String tags = sequence.tagsTopic();
            if (topics.contains(tags)) {
                throw new ConfigException(Keys.SEQUENCE_TAGS_TOPIC, tags, "a topic other than input.topic, output.topic and dlq.topic");
            }
            if (stamp.headerFormat() == StampSettings.HeaderFormat.COMPACT) {
                throw new ConfigException(Keys.STAMP_HEADER_FORMAT, stamp.headerFormat(),
                        "text with mode=sequence (its numbers and provenance stay text)");
            }
            if (stamp.jsonField() != null && stamp.jsonField().equals(sequence.tagField())) {
                throw new ConfigException(Keys.SEQUENCE_TAG_SOURCE, sequence.tagSource(),
                        "a field other than stamp.json-field (" + stamp.jsonField() + "): the number would replace the tag");
            }
        }
    }

    /** Without a schema registry (JSON values). */
    public SnowstampConfig(ConnectionSettings connection, TopicSettings topics, IdSettings ids, StampSettings stamp,
                           RecoverySettings recovery, AdminSettings admin, IdMode idMode, SequenceSettings sequence,
                           RegistrySettings registry) {
        this(connection, topics, ids, stamp, recovery, admin, idMode, sequence, registry, null);
    }

    /** Validates a merged key/value map (see {@link ConfigLoader}). */
    public static SnowstampConfig from(Map<String, String> raw) {
        Values v = new Values(raw);
        ConnectionSettings connection = ConnectionSettings.from(v, raw);
        RegistrySettings registry = RegistrySettings.from(v);
        StampSettings stamp = StampSettings.from(v);
        return new SnowstampConfig(
                connection,
                TopicSettings.from(v),
                IdSettings.from(v, registry.autoOffset()),
                stamp,
                RecoverySettings.from(v, connection.processingGuarantee()),
                new AdminSettings(v.isSet(Keys.ADMIN_PORT) ? v.intInRange(Keys.ADMIN_PORT, 0, 65_535) : AdminSettings.OFF,
                        v.string(Keys.ADMIN_BIND),
                        v.isSet(Keys.ADMIN_ADVERTISED_HOST) ? v.string(Keys.ADMIN_ADVERTISED_HOST) : null),
                v.choice(Keys.ID_MODE, IdMode.class),
                SequenceSettings.from(v),
                registry,
                SchemaRegistrySettings.from(v, stamp));
    }

    /** A copy with {@code kafka.bootstrap.servers} set (used once the embedded broker is up). */
    public SnowstampConfig withBootstrapServers(String servers) {
        return new SnowstampConfig(connection.withBootstrapServers(servers), topics, ids, stamp, recovery, admin, idMode, sequence,
                registry, schemaRegistry);
    }

    /** A copy with the worker offset the registry granted ({@code id.worker-offset=auto}). */
    public SnowstampConfig withWorkerOffset(long offset) {
        return new SnowstampConfig(connection, topics, ids.withWorkerOffset(offset), stamp, recovery, admin, idMode, sequence, registry,
                schemaRegistry);
    }

    /** Never the raw record text: it would show secrets. */
    @Override
    public String toString() {
        return describeMasked();
    }

    /** The configuration as text for a log line, with secrets masked. */
    public String describeMasked() {
        StringBuilder out = new StringBuilder();
        out.append("application.id=").append(connection.applicationId())
                .append(" input=").append(topics.input()).append(" output=").append(topics.output()).append(" dlq=").append(topics.dlq())
                .append(" guarantee=").append(connection.processingGuarantee())
                .append(" layout=[").append(ids.layout().describe()).append("]")
                .append(" worker-offset=").append(ids.workerOffset()).append(" datacenter-id=").append(ids.datacenterId())
                .append(" max-lead=").append(Durations.format(ids.maxLead())).append('/').append(ids.onExcessLead())
                .append(" reservation=").append(Durations.format(ids.reservation()))
                .append(" tail-guard=").append(recovery.tailGuard()).append(" takeover-gap=").append(Durations.format(recovery.takeoverGap()))
                .append(" json-field=").append(stamp.jsonField() == null ? "(header only)" : stamp.jsonField())
                .append(stamp.schemaRegistryValues() ? " value-format=" + stamp.valueFormat() + " schema-field=" + stamp.schemaField()
                        + " schema-registry=" + schemaRegistry.describe() : "")
                .append(" admin=").append(admin.describe())
                .append(" instance=").append(connection.instanceId());
        if (idMode == IdMode.SEQUENCE) {       // snowflake mode, the default, is described as before
            out.append(" id.mode=sequence tag-source=").append(sequence.tagSource()).append(" auto-create=").append(sequence.autoCreate())
                    .append(" default-start=").append(sequence.defaultStart()).append(" default-step=").append(sequence.defaultStep())
                    .append(" tags-topic=").append(sequence.tagsTopic());
        }
        connection.kafka().forEach((key, value) -> out.append(" kafka.").append(key).append('=').append(Secrets.mask(key, value)));
        return out.toString();
    }
}
